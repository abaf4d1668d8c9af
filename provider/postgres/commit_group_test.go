package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// batchedCalls runs calls while the commit group's only leader is held, each
// queued in order, so that they are sent as one batch; it returns their
// outcomes and how many batches the group sent for them.
func batchedCalls(t *testing.T, ctx context.Context, p *postgres.Provider, calls ...func() error) ([]error, int64) {
	t.Helper()
	p.SetCommitLeaders(1)
	release := p.HoldCommits(ctx)
	before := p.CommitBatches()
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
		deadline := time.Now().Add(10 * time.Second)
		for p.CommitsWaiting() < i+1 {
			if time.Now().After(deadline) {
				t.Fatalf("%d calls wait for the commit group, want %d", p.CommitsWaiting(), i+1)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := release(); err != nil {
		t.Fatalf("holding batch: %v", err)
	}
	wg.Wait()
	return errs, p.CommitBatches() - before
}

func startAndFetch(t *testing.T, ctx context.Context, p *postgres.Provider, ids ...string) []*provider.OrchestrationItem {
	t.Helper()
	for _, id := range ids {
		item := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: id, Name: "O", ExecutionID: 1, Input: `"in"`}
		if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	var items []*provider.OrchestrationItem
	for len(items) < len(ids) {
		got, err := p.Fetch(ctx, provider.FetchRequest{Max: len(ids), LockFor: time.Minute, PollFor: time.Second})
		if err != nil || len(got) == 0 {
			t.Fatalf("fetch: %d items, %v", len(got), err)
		}
		items = append(items, got...)
	}
	return items
}

func completeFirstTurn(name string) provider.OrchestrationAck {
	now := time.Now().UnixMilli()
	return provider.OrchestrationAck{
		ExecutionID: 1,
		HistoryDelta: []provider.Event{
			{ID: 1, Kind: provider.EventOrchestrationStarted, Time: now, Name: name, Input: `"in"`},
			{ID: 2, Kind: provider.EventOrchestrationCompleted, Time: now, Output: `"out"`},
		},
		Metadata: provider.ExecutionMetadata{OrchestrationName: name, Status: provider.StatusCompleted, Output: `"out"`},
	}
}

func wantCompleted(t *testing.T, ctx context.Context, p *postgres.Provider, ids ...string) {
	t.Helper()
	wantStatus(t, ctx, p, provider.StatusCompleted, ids...)
}

func wantStatus(t *testing.T, ctx context.Context, p *postgres.Provider, status provider.ExecutionStatus, ids ...string) {
	t.Helper()
	for _, id := range ids {
		info, err := p.GetInstanceInfo(ctx, provider.InstanceRequest{Instance: id})
		if err != nil || info.Status != status {
			t.Fatalf("instance %s: %+v %v; want %s", id, info, err, status)
		}
	}
}

// Acks queued together commit in one transaction, each with its own result:
// an orchestration ack, an activity ack and a first turn.
func TestCommitGroupSharesOneTransaction(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	items := startAndFetch(t, ctx, p, "a")
	act := provider.WorkItem{Kind: provider.WorkActivityExecute, Instance: "b", ExecutionID: 1, ID: 1, Name: "A", Input: `1`}
	if err := p.EnqueueForWorker(ctx, provider.EnqueueRequest{Item: act}); err != nil {
		t.Fatal(err)
	}
	lease, err := p.FetchWorkItem(ctx, provider.FetchWorkRequest{LockFor: time.Minute, PollFor: time.Second})
	if err != nil || lease == nil {
		t.Fatalf("fetch work item: %v %v", lease, err)
	}
	var created bool
	errs, batches := batchedCalls(t, ctx, p,
		func() error { return providertest.AckTurn(ctx, p, items[0].LockToken, completeFirstTurn("O")) },
		func() error {
			done := provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "b", ExecutionID: 1, ID: 1, Result: `2`}
			return providertest.AckActivity(ctx, p, lease.LockToken, &done)
		},
		func() (err error) {
			created, _, err = providertest.CommitFirstTurn(ctx, p, "c", completeFirstTurn("O"), nil, time.Minute)
			return err
		})
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || !created {
		t.Fatalf("outcomes %v, first turn created %v; want all committed", errs, created)
	}
	if batches != 2 {
		t.Fatalf("%d batches for the holder and 3 queued acks, want 2 (one shared)", batches)
	}
	wantCompleted(t, ctx, p, "a", "c")
	depths, err := p.GetQueueDepths(ctx)
	if err != nil || depths.Worker != 0 || depths.Orchestrator != 1 {
		t.Fatalf("queues %+v %v; want the activity acked and its completion queued for b", depths, err)
	}
}

// With two leaders allowed (the default, see maxCommitLeaders), a second
// batch goes out while the first is at the server: an ack does not
// wait for a batch that is slow to finish.
func TestCommitGroupSendsTwoBatchesAtOnce(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	p.SetCommitLeaders(2)
	items := startAndFetch(t, ctx, p, "a")
	release := p.HoldCommits(ctx)
	done := make(chan error, 1)
	go func() { done <- providertest.AckTurn(ctx, p, items[0].LockToken, completeFirstTurn("O")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ack beside a held batch: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the ack waited for the held batch; want it sent in a batch of its own")
	}
	if err := release(); err != nil {
		t.Fatalf("held batch: %v", err)
	}
	wantCompleted(t, ctx, p, "a")
}

// One stale lock token in a batch fails only its own ack; the others commit.
func TestCommitGroupStaleAckFailsAlone(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	items := startAndFetch(t, ctx, p, "a", "b")
	ack := func(token string) func() error {
		return func() error { return providertest.AckTurn(ctx, p, token, completeFirstTurn("O")) }
	}
	errs, batches := batchedCalls(t, ctx, p, ack(items[0].LockToken), ack("stale-token"), ack(items[1].LockToken))
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], provider.ErrLockNotHeld) {
		t.Fatalf("ack outcomes %v; want the stale token alone to fail with ErrLockNotHeld", errs)
	}
	if batches != 2 {
		t.Fatalf("%d batches, want 2: the 3 acks were to be sent together first", batches)
	}
	wantCompleted(t, ctx, p, items[0].Instance, items[1].Instance)
}

// Stale cached turns in a batch fail alone, and the rest of the batch is
// sent again together rather than ack by ack: stale claims cost one
// transaction more, not one per ack in their batch.
func TestCommitGroupStaleCachedTurnsFailAlone(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	ids := []string{"a", "b", "c", "d"}
	turns := cachedActivityTurns(t, ctx, p, ids...)
	for _, id := range []string{"b", "d"} {
		external := provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: id, ExecutionID: 1, Name: "x", Input: `1`}
		if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: external}); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(id string) func() error {
		return func() error {
			turn := turns[id]
			_, err := providertest.CommitCachedTurn(ctx, p, turn.lease, turn.item, completeActivityTurn(turn.item), nil, time.Minute)
			return err
		}
	}
	before := p.CommitSends()
	errs, _ := batchedCalls(t, ctx, p, commit("a"), commit("b"), commit("c"), commit("d"))
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], provider.ErrStale) || !errors.Is(errs[3], provider.ErrStale) {
		t.Fatalf("outcomes %v; want b's and d's turns stale (an event waits), a's and c's committed", errs)
	}
	for i, id := range []string{"b", "d"} {
		if msg := errs[1+2*i].Error(); !strings.Contains(msg, "instance "+id+" changed, ended or has messages waiting") {
			t.Errorf("%s's error %q does not give its own reason", id, msg)
		}
	}
	if sends := p.CommitSends() - before; sends != 3 {
		t.Fatalf("%d transactions, want 3: the holder's, the batch of 4, then a's and c's again together", sends)
	}
	wantCompleted(t, ctx, p, "a", "c")
	wantStatus(t, ctx, p, provider.StatusRunning, "b", "d")
	for _, id := range []string{"b", "d"} {
		done := provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: id, ExecutionID: 1, ID: 2, Result: `"ok"`}
		if err := providertest.AckActivity(ctx, p, turns[id].lease, &done); err != nil {
			t.Fatalf("%s's activity, still leased after its stale turn: %v", id, err)
		}
	}
}

// cachedTurn is a turn built from the history cache with the lease of the
// activity whose completion it delivers.
type cachedTurn struct {
	item  *provider.OrchestrationItem
	lease string
}

// cachedActivityTurns starts each instance with a turn scheduling activity
// 2, leases the activities, and builds the turns delivering their results
// from the cache.
func cachedActivityTurns(t *testing.T, ctx context.Context, p *postgres.Provider, ids ...string) map[string]cachedTurn {
	t.Helper()
	for _, item := range startAndFetch(t, ctx, p, ids...) {
		ack := provider.OrchestrationAck{ExecutionID: 1,
			HistoryDelta: []provider.Event{
				{ID: 1, Kind: provider.EventOrchestrationStarted, Time: time.Now().UnixMilli(), Name: "O", Input: `"in"`},
				{ID: 2, Kind: provider.EventActivityScheduled, Time: time.Now().UnixMilli(), Name: "A", Input: `1`},
			},
			WorkerItems: []provider.WorkItem{{Kind: provider.WorkActivityExecute, Instance: item.Instance, ExecutionID: 1, ID: 2, Name: "A", Input: `1`}},
			Metadata:    provider.ExecutionMetadata{OrchestrationName: "O"},
		}
		if err := providertest.AckTurn(ctx, p, item.LockToken, ack); err != nil {
			t.Fatal(err)
		}
	}
	turns := map[string]cachedTurn{}
	for range ids {
		lease, err := p.FetchWorkItem(ctx, provider.FetchWorkRequest{LockFor: time.Minute, PollFor: time.Second})
		if err != nil || lease == nil {
			t.Fatalf("fetch work item: %v %v", lease, err)
		}
		done := provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: lease.Item.Instance, ExecutionID: 1, ID: 2, Result: `"ok"`}
		turn := providertest.CachedTurn(p, lease.Item.Instance, 1, done)
		if turn == nil {
			t.Fatalf("no cached turn of %s", lease.Item.Instance)
		}
		turns[lease.Item.Instance] = cachedTurn{item: turn, lease: lease.LockToken}
	}
	return turns
}

// completeActivityTurn records the activity's result and completes the orchestration.
func completeActivityTurn(turn *provider.OrchestrationItem) provider.OrchestrationAck {
	now := time.Now().UnixMilli()
	return provider.OrchestrationAck{ExecutionID: 1,
		HistoryDelta: []provider.Event{
			{ID: 3, Kind: provider.EventActivityCompleted, SourceID: 2, Time: now, Output: `"ok"`},
			{ID: 4, Kind: provider.EventOrchestrationCompleted, Time: now, Output: `"out"`},
		},
		Metadata: provider.ExecutionMetadata{OrchestrationName: turn.OrchestrationName, Status: provider.StatusCompleted, Output: `"out"`},
	}
}

// A first turn refused in a batch (its instance exists) is refused alone.
func TestCommitGroupRefusedFirstTurnAlone(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	items := startAndFetch(t, ctx, p, "a")
	var createdA, createdB bool
	errs, _ := batchedCalls(t, ctx, p,
		func() error { return providertest.AckTurn(ctx, p, items[0].LockToken, completeFirstTurn("O")) },
		func() (err error) {
			createdA, _, err = providertest.CommitFirstTurn(ctx, p, "a", completeFirstTurn("O"), nil, time.Minute)
			return err
		},
		func() (err error) {
			createdB, _, err = providertest.CommitFirstTurn(ctx, p, "b", completeFirstTurn("O"), nil, time.Minute)
			return err
		})
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || createdA || !createdB {
		t.Fatalf("outcomes %v, created a=%v b=%v; want a refused (it exists), b created", errs, createdA, createdB)
	}
	wantCompleted(t, ctx, p, "a", "b")
}

// A caller whose context ends while it waits is answered with the context's
// error and its ack is not sent.
func TestCommitGroupSkipsCancelledAck(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	items := startAndFetch(t, ctx, p, "a", "b")
	gone, cancel := context.WithCancel(ctx)
	calls := []func() error{
		func() error { return providertest.AckTurn(gone, p, items[0].LockToken, completeFirstTurn("O")) },
		func() error { return providertest.AckTurn(ctx, p, items[1].LockToken, completeFirstTurn("O")) },
	}
	p.SetCommitLeaders(1)
	release := p.HoldCommits(ctx)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
		for p.CommitsWaiting() < i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !errors.Is(errs[0], context.Canceled) || errs[1] != nil {
		t.Fatalf("outcomes %v; want context.Canceled, then nil", errs)
	}
	wantCompleted(t, ctx, p, "b")
	if info, err := p.GetInstanceInfo(ctx, provider.InstanceRequest{Instance: "a"}); err == nil && info.Status == provider.StatusCompleted {
		t.Fatal("the cancelled ack was committed")
	}
}

// dx_fetch_instance_items, which shares batches with acks, must not wait on an
// ack in another batch: one that has deleted the instance's lock row and not
// yet committed. Waiting there is half of a deadlock between two batches.
func TestFetchInstanceDoesNotWaitOnAnUncommittedAck(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	startAndFetch(t, ctx, p, "a")
	tx, err := p.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `DELETE FROM instance_locks WHERE instance_id = 'a'`); err != nil {
		t.Fatal(err)
	}
	bounded, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	item, err := provider.FetchOne(bounded, p, provider.FetchRequest{Instance: "a", LockFor: time.Minute})
	if err != nil || item != nil {
		t.Fatalf("fetch of a while an ack of it is uncommitted: item %v, %v; want none, at once", item != nil, err)
	}
}

// A timer's cached turn and an activity's cached turn of one instance in one
// batch: the batch carries one claim of an instance, so the second turn is
// stale alone (the first changes the history it was built from) and the
// rest of the batch commits together, not ack by ack.
func TestCommitGroupTwoClaimsOfOneInstance(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	turns := cachedActivityTurns(t, ctx, p, "a")
	items := startAndFetch(t, ctx, p, "b")
	due := time.Now()
	timer := provider.WorkItem{Kind: provider.WorkTimerFired, Instance: "a", ExecutionID: 1, ID: 3, FireAt: due.UnixMilli()}
	if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: timer}); err != nil {
		t.Fatal(err)
	}
	timerTurn := providertest.CachedTurn(p, "a", 1, timer)
	if timerTurn == nil {
		t.Fatal("no cached turn of a's timer")
	}
	fired := provider.Event{ID: 3, Kind: provider.EventTimerFired, SourceID: 3, Time: time.Now().UnixMilli()}
	before := p.CommitSends()
	errs, _ := batchedCalls(t, ctx, p,
		func() error {
			_, err := providertest.CommitCachedTurn(ctx, p, "", timerTurn, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{fired}}, nil, time.Minute)
			return err
		},
		func() error {
			turn := turns["a"]
			_, err := providertest.CommitCachedTurn(ctx, p, turn.lease, turn.item, completeActivityTurn(turn.item), nil, time.Minute)
			return err
		},
		func() error { return providertest.AckTurn(ctx, p, items[0].LockToken, completeFirstTurn("O")) })
	if errs[0] != nil || !errors.Is(errs[1], provider.ErrStale) || errs[2] != nil {
		t.Fatalf("outcomes %v; want the timer's turn committed, the activity's stale, b's ack committed", errs)
	}
	if sends := p.CommitSends() - before; sends != 2 {
		t.Fatalf("%d transactions, want 2: the holder's and the batch", sends)
	}
	wantCompleted(t, ctx, p, "b")
	history, err := p.ReadHistory(ctx, provider.ExecutionRequest{Instance: "a"})
	if err != nil || len(history) != 3 || history[2].Kind != provider.EventTimerFired {
		t.Fatalf("a's history %+v %v; want the timer's turn's", history, err)
	}
}
