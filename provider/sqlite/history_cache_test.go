package sqlite

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// The custom status a fetch notes for the history cache comes from the read
// of the history, not from the transaction that locked the turn: when the
// lock expires between the two and another process runs a turn, the cache
// must not pair that turn's history with the custom status before it.
func TestFetchNotesTheCustomStatusReadWithTheHistory(t *testing.T) {
	p, ctx := openBatchStore(t)
	peer, err := Open(ctx, p.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = peer.Close() })
	custom := func(v string) *provider.CustomStatusUpdate { return &provider.CustomStatusUpdate{Value: v} }
	first := startTwo(t, ctx, p)[0]
	ack := completeFirstTurn(first)
	ack.HistoryDelta = ack.HistoryDelta[:1]
	ack.Metadata = provider.ExecutionMetadata{OrchestrationName: first.OrchestrationName, CustomStatus: custom(`"one"`)}
	if err := providertest.AckTurn(ctx, p, first.LockToken, ack); err != nil {
		t.Fatal(err)
	}
	event := provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: first.Instance, Name: "go", Input: `1`}
	if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: event}); err != nil {
		t.Fatal(err)
	}

	// This provider locks the turn, briefly; the peer takes it over once the
	// lock expired and acks it before this provider reads the history.
	var item *provider.OrchestrationItem
	if err := p.writeTx(ctx, "test", func(tx *txn) error {
		now := nowMs()
		item, err = lockIfVisible(ctx, tx, first.Instance, now, now+1)
		return err
	}); err != nil || item == nil {
		t.Fatalf("lock the turn: %v, %v", item, err)
	}
	time.Sleep(5 * time.Millisecond)
	taken, err := provider.FetchOne(ctx, peer, provider.FetchRequest{Instance: first.Instance, LockFor: time.Minute})
	if err != nil || taken == nil {
		t.Fatalf("the peer's fetch: %v, %v", taken, err)
	}
	if err := providertest.AckTurn(ctx, peer, taken.LockToken, provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{{ID: 2, Kind: provider.EventExternalRaised, Name: "go", Input: `1`, Time: nowMs()}},
		Metadata:     provider.ExecutionMetadata{CustomStatus: custom(`"two"`)}}); err != nil {
		t.Fatal(err)
	}
	if err := p.loadHistories(ctx, "test", item); err != nil {
		t.Fatal(err)
	}

	done := provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: first.Instance, ExecutionID: 1, ID: 9, Result: `1`}
	turn := providertest.CachedTurn(p, first.Instance, 1, done)
	if turn == nil {
		t.Fatal("no cached turn after the fetch read the history")
	}
	if len(turn.History) != 2 || turn.CustomStatus == nil || *turn.CustomStatus != `"two"` {
		t.Fatalf("the cached turn has %d events and custom status %v; want 2 events and \"two\", as the peer's turn left them",
			len(turn.History), shown(turn.CustomStatus))
	}
}

func shown(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
