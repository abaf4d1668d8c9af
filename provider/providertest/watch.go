package providertest

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func watchCases() []Case {
	return []Case{
		{Name: "ReportsNewInstance", Run: watchReportsNewInstance},
		{Name: "ReportsCompletion", Run: watchReportsCompletion},
		{Name: "ReportsCustomStatusChange", Run: watchReportsCustomStatus},
		{Name: "ReportsContinueAsNew", Run: watchReportsContinueAsNew},
		{Name: "IgnoresTurnsThatChangeNothing", Run: watchIgnoresNoChange},
		{Name: "SequenceIncreases", Run: watchSequenceIncreases},
		{Name: "ReportsChangesMadeThroughAnotherHandle", Run: watchReportsPeerChanges},
		{Name: "ClosesWhenContextEnds", Run: watchCloses},
	}
}

func (e *env) watch() <-chan provider.StatusChange {
	e.t.Helper()
	ch, err := e.p.Watch(e.ctx)
	e.must(err, "watch")
	return ch
}

// next returns the next change, failing the test if none comes in 30s.
func (e *env) next(ch <-chan provider.StatusChange) provider.StatusChange {
	e.t.Helper()
	select {
	case c, ok := <-ch:
		if !ok {
			e.t.Fatal("watch channel closed")
		}
		return c
	case <-time.After(30 * time.Second):
		e.t.Fatal("no status change reported within 30s")
	}
	return provider.StatusChange{}
}

func watchReportsNewInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	ch := e.watch()
	e.create("a")
	c := e.next(ch)
	e.wantEqual([]any{c.Instance, c.Status, c.ExecutionID}, []any{"a", provider.StatusRunning, 1}, "change")
}

func watchReportsCompletion(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	ch := e.watch()
	e.finish("a", provider.StatusCompleted, `1`)
	c := e.next(ch)
	e.wantEqual([]any{c.Instance, c.Status}, []any{"a", provider.StatusCompleted}, "change")
}

func watchReportsCustomStatus(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	ch := e.watch()
	setCustomStatus(e, "a", provider.CustomStatusUpdate{Value: "v"})
	c := e.next(ch)
	e.wantEqual([]any{c.Instance, c.Status, c.CustomStatusVersion}, []any{"a", provider.StatusRunning, 1}, "change")
}

func watchReportsContinueAsNew(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	ch := e.watch()
	e.continueAsNew("a")
	var last provider.StatusChange
	for last.ExecutionID != 2 {
		last = e.next(ch)
	}
	e.wantEqual(last.Status, provider.StatusRunning, "status of the new execution")
}

func watchIgnoresNoChange(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.create("b")
	ch := e.watch()
	e.turn("a", nil)
	e.finish("b", provider.StatusCompleted, `1`)
	c := e.next(ch)
	e.wantEqual(c.Instance, "b", "first reported change")
}

func watchSequenceIncreases(t *testing.T, f Factory) {
	e := newEnv(t, f)
	ch := e.watch()
	for _, id := range []string{"a", "b", "c"} {
		e.create(id)
	}
	var prev int64
	for range 3 {
		c := e.next(ch)
		if c.Seq <= prev {
			t.Fatalf("sequence went from %d to %d", prev, c.Seq)
		}
		prev = c.Seq
	}
}

func watchReportsPeerChanges(t *testing.T, f Factory) {
	e := newEnv(t, f)
	ch := e.watch()
	peer := &env{t: t, f: f, p: f.OpenPeer(t, e.p), ctx: e.ctx}
	peer.a = peer.p
	peer.create("a")
	c := e.next(ch)
	e.wantEqual([]any{c.Instance, c.Status}, []any{"a", provider.StatusRunning}, "change made by peer")
}

func watchCloses(t *testing.T, f Factory) {
	e := newEnv(t, f)
	ctx, cancel := context.WithCancel(e.ctx)
	ch, err := e.p.Watch(ctx)
	e.must(err, "watch")
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("change reported after cancel with nothing changed")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch channel not closed 30s after its context ended")
	}
}
