package postgres_test

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
)

// A look for ready work leaves out an instance whose timer, noted by this
// provider, falls due soon: the provider takes that turn by name or from its
// cache as the timer falls due, and a look that locked the instance first
// made that turn stale (and the batch committing it was sent again).
func TestLookLeavesOutInstancesOfTimersAboutToFallDue(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		start := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: id, Name: "O", ExecutionID: 1, Input: `"in"`}
		if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: start}); err != nil {
			t.Fatal(err)
		}
	}
	p.NoteTimer("a", time.Now().Add(time.Hour), 2*time.Hour)
	for _, want := range []int{1, 0} {
		items, err := p.Fetch(ctx, provider.FetchRequest{Max: 10, LockFor: time.Minute, PollFor: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != want || (want == 1 && items[0].Instance != "b") {
			t.Fatalf("fetched %d items (%v), want %d: b's turn only, a's timer falls due within the lead", len(items), instancesOf(items), want)
		}
	}
}

func instancesOf(items []*provider.OrchestrationItem) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.Instance
	}
	return ids
}
