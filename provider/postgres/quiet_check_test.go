package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// A fetch of the instance under way when a quiet ack checks it (it holds the
// instance's advisory lock, and has not committed its lock row) could lock
// the instance without seeing the result, which nothing then wakes: the ack
// is not quiet. The result is queued either way.
func quietAckNotQuietDuringAFetch(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t).(*postgres.Provider)
	ctx := t.Context()
	if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: start("a")}); err != nil {
		t.Fatal(err)
	}
	item, err := provider.FetchOne(ctx, p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
	if err != nil || item == nil {
		t.Fatalf("fetch the first turn: %v, %v", item, err)
	}
	ack := provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted, Name: "O"}},
		WorkerItems:  []provider.WorkItem{{Kind: provider.WorkActivityExecute, Instance: "a", ExecutionID: 1, ID: 2, Name: "Act"}},
		Metadata:     provider.ExecutionMetadata{OrchestrationName: "O"}}
	if err := providertest.AckTurn(ctx, p, item.LockToken, ack); err != nil {
		t.Fatal(err)
	}
	lease, err := p.FetchWorkItem(ctx, provider.FetchWorkRequest{LockFor: time.Minute})
	if err != nil || lease == nil {
		t.Fatalf("fetch the activity: %v, %v", lease, err)
	}
	fetcher, err := p.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fetcher.Rollback(context.Background()) }()
	if _, err := fetcher.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '/' || 'a'))`); err != nil {
		t.Fatal(err)
	}
	completion := provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "a", ExecutionID: 1, ID: 2, Result: `"ok"`}
	quiet, err := providertest.AckActivityQuietly(ctx, p, lease.LockToken, completion, 1)
	if err != nil {
		t.Fatal(err)
	}
	if quiet {
		t.Fatal("quiet ack while a fetch of the instance is under way: quiet, want not quiet")
	}
	if err := fetcher.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	next, err := provider.FetchOne(ctx, p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
	if err != nil || next == nil || len(next.Messages) != 1 || next.Messages[0].Kind != provider.WorkActivityCompleted {
		t.Fatalf("the next turn: %+v, %v; want the result", next, err)
	}
}
