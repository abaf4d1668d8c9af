package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// leaseActivities queues one activity per instance and fetches them all.
func leaseActivities(t *testing.T, p *postgres.Provider, instances ...string) map[string]*provider.WorkItemLease {
	t.Helper()
	ctx := t.Context()
	for _, instance := range instances {
		if err := p.EnqueueForWorker(ctx, provider.EnqueueRequest{Item: activity(instance, 2)}); err != nil {
			t.Fatal(err)
		}
	}
	leases := map[string]*provider.WorkItemLease{}
	for range instances {
		l, err := p.FetchWorkItem(ctx, provider.FetchWorkRequest{LockFor: time.Minute, PollFor: time.Second})
		if err != nil || l == nil {
			t.Fatalf("fetch work item: %v %v", l, err)
		}
		leases[l.Item.Instance] = l
	}
	return leases
}

func completed(instance string) *provider.WorkItem {
	return &provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: instance, ExecutionID: 1, ID: 2, Result: `2`}
}

// The activity acks of a batch are one call; a stale token among them fails
// alone and the others' results are queued once each.
func TestCommitGroupActivityAcksShareOneCall(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	leases := leaseActivities(t, p, "a", "b")
	errs, batches := batchedCalls(t, ctx, p,
		func() error { return providertest.AckActivity(ctx, p, leases["a"].LockToken, completed("a")) },
		func() error { return providertest.AckActivity(ctx, p, "stale-token", completed("z")) },
		func() error { return providertest.AckActivity(ctx, p, leases["b"].LockToken, nil) })
	if errs[0] != nil || !errors.Is(errs[1], provider.ErrLockNotHeld) || errs[2] != nil {
		t.Fatalf("outcomes %v; want the stale token alone to fail with ErrLockNotHeld", errs)
	}
	if batches != 2 {
		t.Fatalf("%d batches, want 2: the 3 acks were to be sent together first", batches)
	}
	var workers, onA, onZ int
	row := p.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM worker_queue),
		(SELECT count(*) FROM orchestrator_queue WHERE instance_id = 'a'),
		(SELECT count(*) FROM orchestrator_queue WHERE instance_id = 'z')`)
	if err := row.Scan(&workers, &onA, &onZ); err != nil || workers != 0 || onA != 1 || onZ != 0 {
		t.Fatalf("worker queue %d, a's messages %d, z's %d (%v); want 0, 1, 0", workers, onA, onZ, err)
	}
}
