package histcache

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
)

func started() provider.Event {
	return provider.Event{ID: 1, Kind: provider.EventOrchestrationStarted, Name: "O", Version: "2"}
}

// ackOf is an ack of the given events (stored form encoded) and custom status update.
func ackOf(t *testing.T, execution int64, custom *provider.CustomStatusUpdate, evs ...provider.Event) encode.Ack {
	t.Helper()
	enc, err := encode.EncodeAck("test", provider.OrchestrationAck{ExecutionID: execution, HistoryDelta: evs,
		Metadata: provider.ExecutionMetadata{OrchestrationName: "O", CustomStatus: custom}})
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// A turn is built only when the custom status as of the cached history is
// known: an ack that created the instance, or a fetch that noted it, makes
// it known; acks keep it up to date.
func TestTurnNeedsTheCustomStatus(t *testing.T) {
	c := New(0)
	msg := provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "a", ExecutionID: 1, ID: 2}
	c.Store("a", 7, 1, []provider.Event{started(), {ID: 2, Kind: provider.EventActivityScheduled}}, "e2")
	if c.Turn("a", 1, msg) != nil {
		t.Fatal("a turn built while the custom status is unknown")
	}
	c.NoteCustomStatus("a", 1, 1, nil) // of an older state: ignored
	if c.Turn("a", 1, msg) != nil {
		t.Fatal("a turn built from a custom status noted for another event")
	}
	v := `"x"`
	c.NoteCustomStatus("a", 1, 2, &v)
	turn := c.Turn("a", 1, msg)
	if turn == nil || turn.CustomStatus == nil || *turn.CustomStatus != v || turn.OrchestrationName != "O" || turn.Version != "2" ||
		len(turn.History) != 2 || len(turn.Messages) != 1 || turn.Status != provider.StatusRunning || !turn.Exists {
		t.Fatalf("turn %+v", turn)
	}
	if inc, ex, last, queued, ok := ParseTurnToken(turn.LockToken); !ok || inc != 7 || ex != 1 || last != 2 || queued != nil {
		t.Fatalf("token %q: %d %d %d %q %v", turn.LockToken, inc, ex, last, queued, ok)
	}

	c.Acked("a", false, 0, ackOf(t, 1, &provider.CustomStatusUpdate{Clear: true}, provider.Event{ID: 3, Kind: provider.EventActivityCompleted, SourceID: 2}))
	if turn := c.Turn("a", 1, msg); turn == nil || turn.CustomStatus != nil || len(turn.History) != 3 {
		t.Fatalf("after an ack clearing the custom status: %+v", turn)
	}
	c.Acked("a", false, 0, ackOf(t, 1, nil, provider.Event{ID: 4, Kind: provider.EventOrchestrationCompleted}))
	if turn := c.Turn("a", 1, msg); turn != nil {
		t.Fatalf("a turn of a completed execution: %+v", turn)
	}

	c.Acked("b", true, 9, ackOf(t, 1, &provider.CustomStatusUpdate{Value: `"y"`}, started()))
	if turn := c.Turn("b", 1, msg); turn == nil || turn.CustomStatus == nil || *turn.CustomStatus != `"y"` {
		t.Fatalf("the turn of an instance this process created: %+v", turn)
	}
	if turn := c.Turn("b", 2, msg); turn != nil {
		t.Fatalf("a turn of an execution not cached: %+v", turn)
	}
}

func TestParseTurnTokenRefusesOthers(t *testing.T) {
	for _, token := range []string{"", "6f1c0d1e-1111-4222-8333-944445555666", "cached:0:1:2:", "cached:1:2:3", "cached:1:x:3:", "cached:1:2:3:[", "cached:1:2:3:{}"} {
		if _, _, _, _, ok := ParseTurnToken(token); ok {
			t.Fatalf("%q parsed as a cached turn's token", token)
		}
	}
}

// A turn given queued results delivers them before msg and names their
// stored forms in its token, for the commit to consume; results of another
// instance or execution, or anything but activity results, build no turn.
func TestCachedTurnDeliversQueuedResults(t *testing.T) {
	c := New(0)
	c.Store("a", 7, 1, []provider.Event{started(), {ID: 2, Kind: provider.EventActivityScheduled},
		{ID: 3, Kind: provider.EventActivityScheduled}}, "e3")
	c.NoteCustomStatus("a", 1, 3, nil)
	result := func(id int64) provider.WorkItem {
		return provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "a", ExecutionID: 1, ID: id, Result: "1"}
	}
	msg, queued := result(2), result(3)
	turn := c.CachedTurn("a", 1, msg, queued)
	if turn == nil || len(turn.Messages) != 2 || turn.Messages[0].ID != 3 || turn.Messages[1].ID != 2 || turn.Cached {
		t.Fatalf("turn %+v", turn)
	}
	stored, _ := provider.EncodeWorkItem(queued)
	want, err := CheckCommit("test", "work-token", turn, provider.OrchestrationAck{ExecutionID: 1}, nil, time.Second)
	if err != nil || want.Incarnation != 7 || want.LastEvent != 3 || len(want.Queued) != 1 || want.Queued[0] != stored {
		t.Fatalf("CheckCommit = %+v, %v; want incarnation 7, last event 3, queued [%s]", want, err, stored)
	}
	if _, err := CheckCommit("test", "", turn, provider.OrchestrationAck{ExecutionID: 1}, nil, time.Second); !errors.Is(err, provider.ErrLockNotHeld) {
		t.Fatalf("an activity's turn committed without its activity's token: %v", err)
	}

	other := result(3)
	other.Instance = "b"
	later := result(3)
	later.ExecutionID = 2
	timer := provider.WorkItem{Kind: provider.WorkTimerFired, Instance: "a", ExecutionID: 1, ID: 3}
	for _, q := range []provider.WorkItem{other, later, timer} {
		if turn := c.CachedTurn("a", 1, msg, q); turn != nil {
			t.Fatalf("a turn built with queued %+v", q)
		}
	}
	if turn := c.CachedTurn("a", 1, timer, queued); turn != nil {
		t.Fatal("a timer's turn built with queued results")
	}
}

// The due timers of one instance make one turn that delivers them all and
// consumes them with its commit; an instance the cache cannot build a turn
// for is returned by name.
func TestDueTurnsDeliverAnInstancesTimersInOneTurn(t *testing.T) {
	c := New(0)
	c.Store("a", 7, 1, []provider.Event{started()}, "e1")
	c.NoteCustomStatus("a", 1, 1, nil)
	timer := func(instance string, id int64) wake.DueTimer {
		stored, err := provider.EncodeWorkItem(provider.WorkItem{Kind: provider.WorkTimerFired, Instance: instance, ExecutionID: 1, ID: id})
		if err != nil {
			t.Fatal(err)
		}
		return wake.DueTimer{Instance: instance, Item: stored}
	}
	var inFlight InFlight
	turns, byName := c.DueTurns([]wake.DueTimer{timer("a", 2), timer("a", 3), timer("b", 2)}, true, &inFlight)
	if len(turns) != 1 || !slices.Equal(byName, []string{"b"}) {
		t.Fatalf("%d turns, by name %v; want a's turn, b by name", len(turns), byName)
	}
	turn := turns[0]
	if !turn.Cached || len(turn.Messages) != 2 || turn.Messages[0].ID != 2 || turn.Messages[1].ID != 3 {
		t.Fatalf("a's turn %+v; want both timers, in order, Cached", turn)
	}
	want, err := CheckCommit("test", "", turn, provider.OrchestrationAck{ExecutionID: 1}, nil, time.Second)
	if err != nil || !slices.Equal(want.Queued, []string{timer("a", 2).Item, timer("a", 3).Item}) {
		t.Fatalf("CheckCommit = %+v, %v; want both timers consumed", want, err)
	}
	if !slices.Equal(inFlight.List(), []string{"a"}) {
		t.Fatalf("in flight %v, want [a]", inFlight.List())
	}
	if turns, byName := c.DueTurns([]wake.DueTimer{timer("a", 2)}, false, &inFlight); len(turns) != 0 || !slices.Equal(byName, []string{"a"}) {
		t.Fatalf("without cached: %d turns, by name %v", len(turns), byName)
	}
}
