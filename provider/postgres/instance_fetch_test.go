package postgres_test

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// A batch's fetches of next turns are one call, made after its acks: two
// results of one instance in a batch give its turn to one caller only, with
// both results in it, and a result of another instance continues that one.
func TestCommitGroupFetchesEachInstanceOnce(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	for _, instance := range []string{"a", "b"} {
		turn := startAndFetch(t, ctx, p, instance)[0]
		if err := providertest.AckTurn(ctx, p, turn.LockToken, runningTurn("O")); err != nil {
			t.Fatal(err)
		}
	}
	for _, item := range []provider.WorkItem{activity("a", 2), activity("a", 3), activity("b", 2)} {
		if err := p.EnqueueForWorker(ctx, provider.EnqueueRequest{Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	leases := map[int64]*provider.WorkItemLease{}
	var leaseB *provider.WorkItemLease
	for range 3 {
		l, err := p.FetchWorkItem(ctx, provider.FetchWorkRequest{LockFor: time.Minute, PollFor: time.Second})
		if err != nil || l == nil {
			t.Fatalf("fetch work item: %v %v", l, err)
		}
		if l.Item.Instance == "b" {
			leaseB = l
			continue
		}
		leases[l.Item.ID] = l
	}
	result := func(instance string, id int64) provider.WorkItem {
		return provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: instance, ExecutionID: 1, ID: id, Result: `2`}
	}
	turns := make([]*provider.OrchestrationItem, 3)
	continueWith := func(k int, l *provider.WorkItemLease) func() error {
		return func() (err error) {
			turns[k], err = providertest.AckActivityNext(ctx, p, l.LockToken, result(l.Item.Instance, l.Item.ID), time.Minute)
			return err
		}
	}
	errs, batches := batchedCalls(t, ctx, p, continueWith(0, leases[2]), continueWith(1, leases[3]), continueWith(2, leaseB))
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || batches != 2 {
		t.Fatalf("outcomes %v in %d batches; want all committed, sharing one", errs, batches)
	}
	if turns[0] == nil || turns[1] != nil {
		t.Fatalf("a's turn went to callers %v, %v; want the first only", turns[0] != nil, turns[1] != nil)
	}
	if got := len(turns[0].Messages); got != 2 {
		t.Fatalf("a's turn has %d messages, want both results", got)
	}
	if turns[2] == nil || turns[2].Instance != "b" || len(turns[2].Messages) != 1 {
		t.Fatalf("b's caller got %+v; want b's turn with its result", turns[2])
	}
	if again, err := provider.FetchOne(ctx, p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0}); err != nil || again != nil {
		t.Fatalf("a fetch after the batch got %v (%v); want nothing: both turns are held", again, err)
	}
}
