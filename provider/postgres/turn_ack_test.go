package postgres_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

func activity(instance string, id int64) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkActivityExecute, Instance: instance, ExecutionID: 1, ID: id, Name: "A", Input: `1`}
}

func timer(instance string, id int64, due time.Time) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkTimerFired, Instance: instance, ExecutionID: 1, ID: id, FireAt: due.UnixMilli()}
}

func runningTurn(name string) provider.OrchestrationAck {
	return provider.OrchestrationAck{
		ExecutionID:  1,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted, Time: time.Now().UnixMilli(), Name: name, Input: `"in"`}},
		Metadata:     provider.ExecutionMetadata{OrchestrationName: name, Status: provider.StatusRunning},
	}
}

// The turn acks of a batch are one call of the ack function; each ack's
// parts land on its own instance and each caller gets its own leases, in
// the order it asked for them.
func TestCommitGroupAcksEachTurnOfABatchAsItsOwn(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	items := startAndFetch(t, ctx, p, "a", "b", "c")
	turns := map[string]string{}
	for _, it := range items {
		turns[it.Instance] = it.LockToken
	}
	// A timer c's turn cancels, queued before the batch.
	if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: timer("c", 7, time.Now().Add(time.Hour))}); err != nil {
		t.Fatal(err)
	}

	// a schedules three activities, cancels the second and leases the third, then the first.
	ackA := runningTurn("O")
	ackA.WorkerItems = []provider.WorkItem{activity("a", 2), activity("a", 3), activity("a", 4)}
	ackA.CancelledActivities = []provider.ActivityRef{{Instance: "a", ExecutionID: 1, ActivityID: 3}}
	// b sets a custom status, starts x and sets a timer of its own.
	ackB := runningTurn("O")
	ackB.Metadata.CustomStatus = &provider.CustomStatusUpdate{Value: `"half"`}
	ackB.OrchestratorItems = []provider.WorkItem{
		{Kind: provider.WorkStartOrchestration, Instance: "x", Name: "O", ExecutionID: 1, Input: `"in"`},
		timer("b", 9, time.Now().Add(time.Hour)),
	}
	// c completes and cancels its timer.
	ackC := completeFirstTurn("O")
	ackC.CancelledTimers = []provider.TimerRef{{ExecutionID: 1, TimerID: 7}}
	// e is a first turn leasing its one activity.
	ackE := runningTurn("O")
	ackE.WorkerItems = []provider.WorkItem{activity("e", 2)}

	var leasesA, leasesE []*provider.WorkItemLease
	var created bool
	errs, batches := batchedCalls(t, ctx, p,
		func() (err error) {
			leasesA, err = providertest.AckTurnLeasing(ctx, p, turns["a"], ackA, []int{2, 0}, time.Minute)
			return err
		},
		func() error { return providertest.AckTurn(ctx, p, turns["b"], ackB) },
		func() error { return providertest.AckTurn(ctx, p, turns["c"], ackC) },
		func() (err error) {
			created, leasesE, err = providertest.CommitFirstTurn(ctx, p, "e", ackE, []int{0}, time.Minute)
			return err
		})
	if slices.ContainsFunc(errs, func(err error) bool { return err != nil }) || !created {
		t.Fatalf("outcomes %v, e created %v; want all committed", errs, created)
	}
	if batches != 2 {
		t.Fatalf("%d batches for the holder and 4 queued acks, want 2 (one shared)", batches)
	}

	if len(leasesA) != 2 || leasesA[0].Item.ID != 4 || leasesA[1].Item.ID != 2 {
		t.Fatalf("a's leases %v; want activities 4 then 2", leaseIDs(leasesA))
	}
	if len(leasesE) != 1 || leasesE[0].Item.Instance != "e" || leasesE[0].State != provider.StateRunning {
		t.Fatalf("e's leases %+v; want its activity, Running", leasesE)
	}
	for _, l := range append(leasesA, leasesE...) {
		if l.State != provider.StateRunning || l.LockToken == "" {
			t.Fatalf("lease %+v; want a token and state Running", l)
		}
		var instance string
		var id int64
		row := p.Pool().QueryRow(ctx, `SELECT instance_id, activity_id FROM worker_queue WHERE lock_token = $1`, l.LockToken)
		if err := row.Scan(&instance, &id); err != nil || instance != l.Item.Instance || id != l.Item.ID {
			t.Fatalf("lease of %s/%d holds the row of %s/%d (%v)", l.Item.Instance, l.Item.ID, instance, id, err)
		}
		if err := providertest.AckActivity(ctx, p, l.LockToken, nil); err != nil {
			t.Fatalf("ack of leased activity %s/%d: %v", l.Item.Instance, l.Item.ID, err)
		}
	}
	queued := p.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE instance_id = 'a'), count(*) FROM worker_queue`)
	var onA, all int
	if err := queued.Scan(&onA, &all); err != nil || onA != 0 || all != 0 {
		t.Fatalf("worker queue after acking the leases: a %d, all %d (%v); want the cancelled activity gone, nothing left", onA, all, err)
	}

	cs, _, err := p.GetCustomStatus(ctx, provider.CustomStatusRequest{Instance: "b"})
	if err != nil || cs.Value == nil || *cs.Value != `"half"` || cs.Version != 1 {
		t.Fatalf("b's custom status %+v %v; want \"half\" at version 1", cs, err)
	}
	wantCompleted(t, ctx, p, "c")
	for instance, want := range map[string]int{"a": 0, "b": 1, "c": 0, "x": 1} {
		var n int
		if err := p.Pool().QueryRow(ctx, `SELECT count(*) FROM orchestrator_queue WHERE instance_id = $1`, instance).Scan(&n); err != nil || n != want {
			t.Fatalf("orchestrator queue of %s: %d messages (%v), want %d", instance, n, err, want)
		}
	}
	wantStatus(t, ctx, p, provider.StatusRunning, "a", "b", "e")
}

// An ack repeating an event its execution has fails alone with
// ErrDuplicateEvent; the batch's other ack commits.
func TestCommitGroupDuplicateEventFailsAlone(t *testing.T) {
	p := pgtest.Open(t)
	ctx := t.Context()
	first := startAndFetch(t, ctx, p, "a")[0]
	if err := providertest.AckTurn(ctx, p, first.LockToken, runningTurn("O")); err != nil {
		t.Fatal(err)
	}
	if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: timer("a", 3, time.Now())}); err != nil {
		t.Fatal(err)
	}
	turns := map[string]string{}
	for _, it := range startAndFetch(t, ctx, p, "b", "c") {
		turns[it.Instance] = it.LockToken
	}
	if _, ok := turns["a"]; !ok {
		t.Fatalf("fetched %v; want a's timer turn among them", turns)
	}
	errs, batches := batchedCalls(t, ctx, p,
		// Event 1 again: a's first turn recorded it.
		func() error { return providertest.AckTurn(ctx, p, turns["a"], runningTurn("O")) },
		func() error { return providertest.AckTurn(ctx, p, turns["b"], completeFirstTurn("O")) })
	if !errors.Is(errs[0], provider.ErrDuplicateEvent) || errs[1] != nil {
		t.Fatalf("outcomes %v; want ErrDuplicateEvent for a alone", errs)
	}
	if batches != 2 {
		t.Fatalf("%d batches, want 2: the 2 acks were to be sent together first", batches)
	}
	wantCompleted(t, ctx, p, "b")
}

func leaseIDs(leases []*provider.WorkItemLease) []int64 {
	var ids []int64
	for _, l := range leases {
		ids = append(ids, l.Item.ID)
	}
	return ids
}
