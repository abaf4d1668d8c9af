package histcache

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
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
	if inc, ex, last, queued, ok := ParseTurnToken(turn.LockToken); !ok || inc != 7 || ex != 1 || last != 2 || queued != "" {
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
	for _, token := range []string{"", "6f1c0d1e-1111-4222-8333-944445555666", "cached:0:1:2:", "cached:1:2:3", "cached:1:x:3:"} {
		if _, _, _, _, ok := ParseTurnToken(token); ok {
			t.Fatalf("%q parsed as a cached turn's token", token)
		}
	}
}
