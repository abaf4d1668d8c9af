package dispatch

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// fanWaits runs the first turn of an orchestration that waits for all of n
// activities and returns its ack and the quiet waits it left: the
// activities are events 2..n+1, and all but the last result are quiet.
func fanWaits(t *testing.T, n int) (provider.OrchestrationAck, *engine.QuietWaits) {
	t.Helper()
	reg := engine.NewRegistry()
	engine.RegisterOrchestration(reg, "Fan", func(ctx *engine.OrchestrationContext, n int) (int, error) {
		var fs []*engine.Future
		for i := range n {
			fs = append(fs, ctx.CallActivity("Pow", i))
		}
		return 0, ctx.WhenAll(fs...)
	})
	input, err := engine.EncodePayload(n)
	if err != nil {
		t.Fatal(err)
	}
	item := &provider.OrchestrationItem{Instance: "i", Messages: []provider.WorkItem{
		{Kind: provider.WorkStartOrchestration, Instance: "i", Name: "Fan", Input: input, ExecutionID: 1}}}
	in, v := engine.PrepareTurn(item, time.Now())
	if v != engine.RunIt {
		t.Fatalf("prepare: verdict %v", v)
	}
	ack, waits, err := engine.RunTurn(reg, in, slog.New(slog.DiscardHandler))
	if err != nil || waits == nil {
		t.Fatalf("first turn of Fan(%d): waits %v, %v", n, waits, err)
	}
	return ack, waits
}

func TestQuietSetsAreNotedForRunningExecutionsOnly(t *testing.T) {
	var sets quietSets
	running, q := fanWaits(t, 2)
	sets.note("i", running, q)
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "i", ExecutionID: 1, ID: 2}); held == nil || held.lastEvent != 3 {
		t.Fatalf("take = %v; want the set, at event 3", held)
	}
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "i", ExecutionID: 2, ID: 3}); held != nil {
		t.Fatal("a result of another execution is not quiet")
	}
	sets.forget("i")
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "i", ExecutionID: 1, ID: 3}); held != nil {
		t.Fatal("a forgotten set answers nothing")
	}
	ended := running
	ended.Metadata.Status = provider.StatusCompleted
	_, waits := fanWaits(t, 2)
	sets.note("i", ended, waits)
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "i", ExecutionID: 1, ID: 3}); held != nil {
		t.Fatal("a set of an execution that ended is not noted")
	}
}

// A quiet ack still in flight when a turn that records no event commits (a
// repeated keyed event) leaves its result queued where that turn did not
// see it: the turn notes no set, so the results after it are not quiet, and
// the old ack settles into nothing.
func TestQuietAckInFlightAcrossATurnWithoutEvents(t *testing.T) {
	first, waits := fanWaits(t, 3)
	var sets quietSets
	sets.note("inst", first, waits)
	result := func(k int) *provider.WorkItem {
		return &provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "inst", ExecutionID: 1, ID: int64(k) + 2, Result: "1"}
	}
	held, _ := sets.take(t.Context(), result(0))
	if held == nil {
		t.Fatal("the first of three results is quiet")
	}
	sets.forget("inst") // the repeated event's turn begins
	// That turn leaves the same waits (no result was delivered) and records
	// no event.
	_, same := fanWaits(t, 3)
	noEvents := provider.OrchestrationAck{ExecutionID: 1}
	sets.note("inst", noEvents, same)
	sets.settle(result(0), held, true) // the store found the history unchanged
	if again, _ := sets.take(t.Context(), result(1)); again != nil {
		t.Fatalf("after a turn without events the second result is quiet (set of event %d, %d acks in flight): with the first queued unseen, the third would be too",
			again.lastEvent, again.inFlight)
	}
	if held.inFlight != 0 {
		t.Fatalf("the old set has %d acks in flight after its ack settled, want 0", held.inFlight)
	}
}

// Sets unused for quietSetIdle are dropped: an instance whose next turns run
// in another process never takes its set here again.
func TestIdleQuietSetsAreDropped(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	sets := quietSets{now: func() time.Time { return now }}
	ack, _ := fanWaits(t, 2)
	set := func() *engine.QuietWaits {
		_, waits := fanWaits(t, 2)
		return waits
	}
	for i := range 50 {
		sets.note(fmt.Sprint("left-", i), ack, set())
	}
	sets.note("busy", ack, set())
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "busy", ExecutionID: 1, ID: 2}); held == nil {
		t.Fatal("busy's first result is quiet")
	}
	now = now.Add(quietSetIdle / 2)
	sets.note("fresh", ack, set())
	now = now.Add(quietSetIdle / 2)
	sets.note("new", ack, set())
	if got := sets.len(); got != 3 {
		t.Fatalf("%d sets kept after %s, want 3 (busy with an ack in flight, fresh and new)", got, quietSetIdle)
	}
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "left-7", ExecutionID: 1, ID: 2}); held != nil {
		t.Fatal("a dropped set answered")
	}
}
