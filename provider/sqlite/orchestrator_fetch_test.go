package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// A fetch whose history read fails (after the commit that locked the
// instances) hands the items back with no attempt counted: they can be
// fetched again at once instead of after the lock timeout.
func TestFailedHistoryReadHandsItemsBack(t *testing.T) {
	p, ctx := openBatchStore(t)
	items := startTwo(t, ctx, p)
	for _, it := range items {
		if err := providertest.AckTurn(ctx, p, it.LockToken, provider.OrchestrationAck{
			ExecutionID:  1,
			HistoryDelta: completeFirstTurn(it).HistoryDelta[:1],
			Metadata:     provider.ExecutionMetadata{OrchestrationName: it.OrchestrationName},
		}); err != nil {
			t.Fatal(err)
		}
		ev := provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: it.Instance, Name: "go", Input: `1`}
		if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: ev}); err != nil {
			t.Fatal(err)
		}
	}
	locked, err := p.Fetch(ctx, provider.FetchRequest{Max: 2, LockFor: time.Hour, PollFor: 0})
	if err != nil || len(locked) != 2 {
		t.Fatalf("fetch: %d items, %v", len(locked), err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.loadHistories(gone, "fetch orchestration items", locked...); err == nil {
		t.Fatal("history read with an ended context succeeded")
	}
	again, err := p.Fetch(ctx, provider.FetchRequest{Max: 2, LockFor: time.Hour, PollFor: 0})
	if err != nil || len(again) != 2 {
		t.Fatalf("fetch after the failed read: %d items, %v; want both handed back", len(again), err)
	}
	for _, it := range again {
		if it.AttemptCount != 1 || len(it.History) != 1 {
			t.Fatalf("%s: attempt %d, %d events; want attempt 1 and the stored history", it.Instance, it.AttemptCount, len(it.History))
		}
	}
}

func startTwo(t *testing.T, ctx context.Context, p *Provider) []*provider.OrchestrationItem {
	t.Helper()
	for _, id := range []string{"a", "b"} {
		item := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: id, Name: "O", ExecutionID: 1, Input: `"in"`}
		if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	items, err := p.Fetch(ctx, provider.FetchRequest{Max: 2, LockFor: time.Minute, PollFor: 0})
	if err != nil || len(items) != 2 {
		t.Fatalf("fetch: %d items, %v", len(items), err)
	}
	return items
}

// A look for ready work leaves out an instance whose timer, noted by this
// provider, falls due soon: the provider takes that turn by name or from its
// cache as the timer falls due, and a look that locked the instance first
// made that turn stale.
func TestLookLeavesOutInstancesOfTimersAboutToFallDue(t *testing.T) {
	p, ctx := openBatchStore(t)
	for _, id := range []string{"a", "b"} {
		start := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: id, Name: "O", ExecutionID: 1, Input: `"in"`}
		if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: start}); err != nil {
			t.Fatal(err)
		}
	}
	p.eng.Due.SetScanLead(2 * time.Hour)
	p.eng.Due.NoteTimer("a", time.Now().Add(time.Hour), "")
	for _, want := range []int{1, 0} {
		items, err := p.Fetch(ctx, provider.FetchRequest{Max: 10, LockFor: time.Minute, PollFor: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != want || (want == 1 && items[0].Instance != "b") {
			t.Fatalf("fetched %d items, want %d: b's turn only, a's timer falls due within the lead", len(items), want)
		}
	}
}
