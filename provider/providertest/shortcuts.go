package providertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Eager dispatch (provider.TurnCommit.Lease), continuing an orchestration
// from its activity's commit or from its own turn's
// (provider.CommitRequest.LockNextFor), eager start
// (provider.StartRequest.LockFor) and direct start (provider.TurnNew): the
// round trips a dispatcher saves
// must not lose, duplicate or reorder work.
func shortcutCases() []Case {
	return []Case{
		{Name: "AckLeasesChosenActivities", Run: ackLeasesChosenActivities, Path: PathLease},
		{Name: "AckLeasingWithStaleTokenLeasesNothing", Run: ackLeasingStaleToken, Path: PathLease},
		{Name: "AckLeasingRejectsBadPositions", Run: ackLeasingBadPositions, Path: PathLease},
		{Name: "LeasedActivityIsNotFetchedAgain", Run: leasedActivityNotFetched, Path: PathLease},
		{Name: "LeaseReportsTheTurnsEnd", Run: leaseReportsTurnsEnd, Path: PathLease},
		{Name: "AckLeasingSkipsActivityItCancels", Run: ackLeasingSkipsCancelled, Path: PathLease},
		{Name: "ActivityAckContinuesFreeInstance", Run: activityAckContinuesFreeInstance, Path: PathNextTurn},
		{Name: "ActivityAckLeavesLockedInstanceQueued", Run: activityAckLeavesLockedInstance, Path: PathNextTurn},
		{Name: "ActivityAckContinuingWithStaleTokenQueuesNothing", Run: activityAckContinuingStaleToken, Path: PathNextTurn},
		{Name: "TurnAckContinuesWithArrivedMessages", Run: turnAckContinuesArrived, Path: PathNextTurn},
		{Name: "TurnAckContinuingWithNothingVisibleReleases", Run: turnAckContinuingReleases, Path: PathNextTurn},
		{Name: "TurnAckContinuesItsContinueAsNew", Run: turnAckContinuesContinueAsNew, Path: PathNextTurn},
		{Name: "TurnAckContinuingWithStaleTokenCommitsNothing", Run: turnAckContinuingStaleToken, Path: PathNextTurn},
		{Name: "EagerStartLocksFreeInstance", Run: eagerStartLocksFreeInstance, Path: PathEagerStart},
		{Name: "EagerStartLeavesLockedInstanceQueued", Run: eagerStartLeavesLockedInstance, Path: PathEagerStart},
		{Name: "EagerStartOfInvalidItemQueuesNothing", Run: eagerStartInvalidItem, Path: PathEagerStart},
		{Name: "FirstTurnCreatesInstance", Run: firstTurnCreatesInstance, Path: PathDirectStart},
		{Name: "FirstTurnRefusedForExistingInstance", Run: firstTurnRefusedExisting, Path: PathDirectStart},
		{Name: "FirstTurnRefusedWhenMessageQueued", Run: firstTurnRefusedQueued, Path: PathDirectStart},
		{Name: "FirstTurnRefusedWhenLocked", Run: firstTurnRefusedLocked, Path: PathDirectStart},
		{Name: "FirstTurnInvalidCommitsNothing", Run: firstTurnInvalid, Path: PathDirectStart},
		{Name: "ConcurrentFirstTurnsCreateOnce", Run: concurrentFirstTurns, Path: PathDirectStart},
	}
}

// directFirstTurn is the first turn of instance computed from startItem,
// scheduling activities 2, 3 and 4, a timer (5) and a custom status.
func directFirstTurn(instance string) provider.OrchestrationAck {
	start := startItem(instance)
	ack := firstTurn(&provider.OrchestrationItem{Instance: instance, ExecutionID: 1, OrchestrationName: start.Name, Version: start.Version})
	for id := int64(2); id <= 4; id++ {
		ack.HistoryDelta = append(ack.HistoryDelta, provider.Event{ID: id, Kind: provider.EventActivityScheduled, Name: "Act"})
		ack.WorkerItems = append(ack.WorkerItems, activityItem(instance, 1, id))
	}
	ack.HistoryDelta = append(ack.HistoryDelta, provider.Event{ID: 5, Kind: provider.EventTimerCreated, FireAt: time.Now().Add(time.Hour).UnixMilli()})
	ack.OrchestratorItems = []provider.WorkItem{{Kind: provider.WorkTimerFired, Instance: instance, ExecutionID: 1, ID: 5,
		FireAt: time.Now().Add(time.Hour).UnixMilli()}}
	ack.Metadata.CustomStatus = &provider.CustomStatusUpdate{Value: `"begun"`}
	return ack
}

// firstTurnCreatesInstance: the instance, its history, its messages, custom
// status and leases appear in one commit; nothing is left to fetch for it,
// and its next turn takes it like any other.
func firstTurnCreatesInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	created, leases, err := CommitFirstTurn(e.ctx, e.p, "a", directFirstTurn("a"), []int{1}, longLock)
	e.must(err, "commit a's first turn")
	e.wantEqual(created, true, "a created")
	e.wantEqual(len(leases), 1, "leases")
	e.wantEqual(leases[0].Item.ID, int64(3), "the leased activity")
	e.wantEqual(leases[0].AttemptCount, 1, "its attempt")
	e.wantEqual(leases[0].State, provider.StateRunning, "its execution's state")
	e.wantEqual(len(e.history("a")), 5, "a's history")
	info := e.info("a")
	e.wantEqual(info.Status, provider.StatusRunning, "a's status")
	e.wantEqual(info.OrchestrationName, orchName, "a's orchestration")
	cs, changed, err := e.p.GetCustomStatus(e.ctx, provider.CustomStatusRequest{Instance: "a"})
	e.must(err, "read a's custom status")
	if !changed || cs.Value == nil || *cs.Value != `"begun"` {
		t.Fatalf("a's custom status %+v (changed %v), want \"begun\"", cs, changed)
	}
	e.fetchNone() // the timer is not due; no start message was queued
	var ids []int64
	for range 2 {
		ids = append(ids, e.fetchWork().Item.ID)
	}
	e.wantEqual(ids, []int64{2, 4}, "the activities not leased, fetchable")
	e.must(AckActivity(e.ctx, e.p, leases[0].LockToken, completionItem("a", 1, 3)), "ack the leased activity")
	next := e.fetch()
	e.wantEqual(next.Instance, "a", "a's next turn")
	e.wantEqual(len(next.History), 5, "the next turn's history")
}

func firstTurnRefusedExisting(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	created, leases, err := CommitFirstTurn(e.ctx, e.p, "a", directFirstTurn("a"), []int{0}, longLock)
	e.must(err, "commit a first turn of an existing instance")
	e.wantEqual(created, false, "created")
	e.wantEqual(len(leases), 0, "leases")
	e.wantEqual(len(e.history("a")), 1, "a's history, unchanged")
	e.fetchWorkNone()
	e.fetchNone()
}

// A start queued for the instance (or any message) comes first: the direct
// start is refused and the queued message stays for a dispatcher.
func firstTurnRefusedQueued(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	created, _, err := CommitFirstTurn(e.ctx, e.p, "a", directFirstTurn("a"), nil, longLock)
	e.must(err, "commit a first turn with a start queued")
	e.wantEqual(created, false, "created")
	item := e.fetch()
	e.wantEqual(item.Exists, false, "a exists")
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "a's queued start")
	e.fetchWorkNone()
}

func firstTurnRefusedLocked(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	held := e.fetch()
	created, _, err := CommitFirstTurn(e.ctx, e.p, "a", directFirstTurn("a"), nil, longLock)
	e.must(err, "commit a first turn of a locked instance")
	e.wantEqual(created, false, "created")
	e.ack(held, firstTurn(held))
	e.wantEqual(len(e.history("a")), 1, "a's history: the locked turn's")
}

func firstTurnInvalid(t *testing.T, f Factory) {
	e := newEnv(t, f)
	noName := directFirstTurn("a")
	noName.Metadata.OrchestrationName = ""
	later := directFirstTurn("a")
	later.ExecutionID = 2
	for what, call := range map[string]func() error{
		"no orchestration name": func() error {
			_, _, err := CommitFirstTurn(e.ctx, e.p, "a", noName, nil, longLock)
			return err
		},
		"execution 2": func() error {
			_, _, err := CommitFirstTurn(e.ctx, e.p, "a", later, nil, longLock)
			return err
		},
		"no instance": func() error {
			_, _, err := CommitFirstTurn(e.ctx, e.p, "", directFirstTurn(""), nil, longLock)
			return err
		},
		"lease out of range": func() error {
			_, _, err := CommitFirstTurn(e.ctx, e.p, "a", directFirstTurn("a"), []int{3}, longLock)
			return err
		},
		"a lease with no lease timeout": func() error {
			_, _, err := CommitFirstTurn(e.ctx, e.p, "a", directFirstTurn("a"), []int{0}, 0)
			return err
		},
	} {
		e.wantErr(call(), provider.ErrInvalidArgument, what)
	}
	e.wantEqual(len(e.history("a")), 0, "a's history")
	e.fetchWorkNone()
	e.fetchNone()
}

// Two processes starting the same instance directly at once: one creates it,
// the other is refused; the history is the winner's alone.
func concurrentFirstTurns(t *testing.T, f Factory) {
	e := newEnv(t, f)
	const n = 4
	results := make(chan bool, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			created, _, err := CommitFirstTurn(e.ctx, e.p, "a", directFirstTurn("a"), nil, longLock)
			results <- created
			errs <- err
		}()
	}
	createdCount := 0
	for range n {
		if <-results {
			createdCount++
		}
		if err := <-errs; err != nil {
			t.Fatalf("concurrent first turn: %v", err)
		}
	}
	e.wantEqual(createdCount, 1, "instances created by concurrent first turns")
	e.wantEqual(len(e.history("a")), 5, "a's history")
	var ids []int64
	for range 3 {
		ids = append(ids, e.fetchWork().Item.ID)
	}
	e.wantEqual(ids, []int64{2, 3, 4}, "a's activities, queued once")
	e.fetchWorkNone()
}

// startWithActivity runs a's first turn, which schedules activity 2.
func startWithActivity(e *env) {
	e.t.Helper()
	e.enqueue(startItem("a"))
	item := e.fetch()
	ack := firstTurn(item)
	ack.WorkerItems = []provider.WorkItem{activityItem("a", 1, 2)}
	e.ack(item, ack)
}

// scheduleTurn is a's first turn scheduling activities 2, 3 and 4.
func scheduleTurn(item *provider.OrchestrationItem) provider.OrchestrationAck {
	ack := firstTurn(item)
	ack.WorkerItems = []provider.WorkItem{activityItem("a", 1, 2), activityItem("a", 1, 3), activityItem("a", 1, 4)}
	return ack
}

func ackLeasesChosenActivities(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	leases, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, scheduleTurn(item), []int{2, 0}, longLock)
	e.must(err, "ack leasing activities 4 and 2")
	var ids []int64
	for _, l := range leases {
		ids = append(ids, l.Item.ID)
		e.wantEqual(l.AttemptCount, 1, "a leased activity's attempt")
		e.wantEqual(l.State, provider.StateRunning, "a leased activity's execution state")
		e.wantEqual(l.Item.Name, "Act", "a leased activity's name")
		if l.LockToken == "" {
			t.Fatal("a lease without a lock token")
		}
	}
	e.wantEqual(ids, []int64{4, 2}, "leased activity IDs, in the order asked")
	e.wantEqual(len(e.history("a")), 1, "the turn's history is committed")
	e.wantEqual(e.fetchWork().Item.ID, int64(3), "the activity not leased is fetchable")
	e.fetchWorkNone()
	for _, l := range leases {
		e.must(AckActivity(e.ctx, e.p, l.LockToken, completionItem("a", 1, l.Item.ID)), "ack a leased activity")
	}
}

func ackLeasingStaleToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true}), "abandon")
	leases, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, scheduleTurn(item), []int{0, 1, 2}, longLock)
	e.wantErr(err, provider.ErrLockNotHeld, "ack leasing with a released token")
	e.wantEqual(len(leases), 0, "leases after a failed ack")
	e.fetchWorkNone()
}

// ackLeasingBadPositions: a position outside the ack's worker items, or one
// asked for twice, is an invalid argument and commits nothing.
func ackLeasingBadPositions(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	for _, bad := range [][]int{{3}, {-1}, {0, 0}} {
		leases, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, scheduleTurn(item), bad, longLock)
		e.wantErr(err, provider.ErrInvalidArgument, fmt.Sprintf("ack leasing positions %v", bad))
		e.wantEqual(len(leases), 0, "leases after a rejected ack")
	}
	e.fetchWorkNone()
	e.wantEqual(len(e.history("a")), 0, "a's history after rejected acks")
	e.ack(item, scheduleTurn(item))
}

func leasedActivityNotFetched(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	leases, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, scheduleTurn(item), []int{0, 1, 2}, longLock)
	e.must(err, "ack leasing every activity")
	e.wantEqual(len(leases), 3, "leases")
	e.fetchWorkNone()
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: leases[1].LockToken}), "hand a leased activity back")
	again := e.fetchWork()
	e.wantEqual(again.Item.ID, int64(3), "the handed-back activity")
	e.wantEqual(again.AttemptCount, 2, "its attempt after the lease and the fetch")
}

// leaseReportsTurnsEnd: a turn that schedules an activity and completes its
// orchestration leases the activity with the state a fetch would report, so
// the worker skips it.
func leaseReportsTurnsEnd(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	ack := scheduleTurn(item)
	ack.HistoryDelta = append(ack.HistoryDelta, event(item, 2, provider.EventOrchestrationCompleted))
	ack.Metadata.Status, ack.Metadata.Output = provider.StatusCompleted, `"done"`
	leases, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, ack, []int{0}, longLock)
	e.must(err, "ack completing the orchestration, leasing an activity")
	e.wantEqual(len(leases), 1, "leases")
	e.wantEqual(leases[0].State, provider.ExecutionState(provider.StatusCompleted), "the leased activity's execution state")
}

// ackLeasingSkipsCancelled: an activity the turn schedules and cancels is
// neither leased nor left to fetch; the other is leased.
func ackLeasingSkipsCancelled(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	ack := scheduleTurn(item)
	ack.CancelledActivities = []provider.ActivityRef{{Instance: "a", ExecutionID: 1, ActivityID: 3}}
	leases, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, ack, []int{1, 0}, longLock)
	e.must(err, "ack scheduling 2, 3 and 4, cancelling 3, leasing 3 and 2")
	var ids []int64
	for _, l := range leases {
		ids = append(ids, l.Item.ID)
	}
	e.wantEqual(ids, []int64{2}, "leased activity IDs")
	e.wantEqual(e.fetchWork().Item.ID, int64(4), "the activity neither leased nor cancelled")
	e.fetchWorkNone()
}

// activityAckContinuesFreeInstance: the completion of a's activity comes
// back as a's next turn, holding only that completion, with a's history.
func activityAckContinuesFreeInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	e.enqueue(startItem("b"))
	lease := e.fetchWork()
	next, err := AckActivityNext(e.ctx, e.p, lease.LockToken, *completionItem("a", 1, 2), longLock)
	e.must(err, "ack the activity, continuing a")
	if next == nil {
		t.Fatal("ack continuing a free instance: no item")
	}
	e.wantEqual(next.Instance, "a", "continued instance")
	e.wantEqual(kinds(next.Messages), []provider.WorkItemKind{provider.WorkActivityCompleted}, "its messages")
	e.wantEqual(len(next.History), 1, "its history")
	e.wantEqual(next.AttemptCount, 1, "its attempt")
	e.wantEqual(e.fetch().Instance, "b", "another fetch finds only b")
	e.fetchNone()
	e.ack(next, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{event(next, 1, provider.EventActivityCompleted)}})
	e.wantEqual(len(e.history("a")), 2, "a's history after the continued turn")
}

func activityAckLeavesLockedInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	e.enqueue(externalItem("a", "x"))
	held := e.fetch()
	lease := e.fetchWork()
	next, err := AckActivityNext(e.ctx, e.p, lease.LockToken, *completionItem("a", 1, 2), longLock)
	e.must(err, "ack the activity while a is locked")
	if next != nil {
		t.Fatalf("ack continuing a locked instance: got an item with token %q, want nil", next.LockToken)
	}
	e.ack(held, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{event(held, 1, provider.EventExternalRaised)}})
	again := e.fetch()
	e.wantEqual(kinds(again.Messages), []provider.WorkItemKind{provider.WorkActivityCompleted}, "the completion, queued")
}

func activityAckContinuingStaleToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken, IgnoreAttempt: true}), "hand the activity back")
	next, err := AckActivityNext(e.ctx, e.p, lease.LockToken, *completionItem("a", 1, 2), longLock)
	e.wantErr(err, provider.ErrLockNotHeld, "ack continuing with a released lease")
	if next != nil {
		t.Fatal("ack continuing with a released lease returned an item")
	}
	e.fetchNone()
}

// turnAckContinuesArrived: messages that arrive while a's turn runs come
// back with the turn's ack as a's next turn, under a new token, with the
// history the ack committed; the activity asked for is leased in the same
// commit, nobody else can fetch a, and the old token is spent.
func turnAckContinuesArrived(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.enqueue(startItem("b"))
	item := e.fetch()
	e.wantEqual(item.Instance, "a", "the first instance fetched")
	e.enqueue(externalItem("a", "x"))
	e.enqueue(externalItem("a", "y"))
	leases, next, err := AckTurnNext(e.ctx, e.p, "a", item.LockToken, scheduleTurn(item), []int{1}, longLock, longLock)
	e.must(err, "ack a's first turn, continuing it")
	e.wantEqual(len(leases), 1, "leases")
	e.wantEqual(leases[0].Item.ID, int64(3), "the leased activity")
	if next == nil {
		t.Fatal("ack continuing with two events queued: no next turn")
	}
	e.wantEqual(next.Instance, "a", "the continued instance")
	if next.LockToken == "" || next.LockToken == item.LockToken {
		t.Fatalf("the next turn's token %q, want a new one (the acked turn's was %q)", next.LockToken, item.LockToken)
	}
	e.wantEqual(kinds(next.Messages), []provider.WorkItemKind{provider.WorkExternalRaised, provider.WorkExternalRaised}, "its messages")
	e.wantEqual([]string{next.Messages[0].Name, next.Messages[1].Name}, []string{"x", "y"}, "their order")
	e.wantEqual(next.Exists, true, "a exists")
	e.wantEqual(next.Status, provider.StatusRunning, "a's status")
	e.wantEqual(len(next.History), 1, "the history the ack committed")
	e.wantEqual(next.AttemptCount, 1, "its attempt")
	e.wantErr(AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: 1}), provider.ErrLockNotHeld,
		"ack with the spent token")
	e.wantEqual(e.fetch().Instance, "b", "another fetch finds only b")
	e.fetchNone()
	var ids []int64
	for range 2 {
		ids = append(ids, e.fetchWork().Item.ID)
	}
	e.wantEqual(ids, []int64{2, 4}, "the activities not leased, fetchable")
	e.ack(next, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{
		event(next, 1, provider.EventExternalRaised), event(next, 2, provider.EventExternalRaised)}})
	e.wantEqual(len(e.history("a")), 3, "a's history after the continued turn")
	e.fetchNone()
}

// turnAckContinuingReleases: with no message of a visible (its timer is
// not due), the ack releases a as a plain ack does; a message queued
// after it is fetched by anyone.
func turnAckContinuingReleases(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	ack := firstTurn(item)
	fire := time.Now().Add(time.Hour).UnixMilli()
	ack.HistoryDelta = append(ack.HistoryDelta, provider.Event{ID: 2, Kind: provider.EventTimerCreated, FireAt: fire})
	ack.OrchestratorItems = []provider.WorkItem{{Kind: provider.WorkTimerFired, Instance: "a", ExecutionID: 1, ID: 2, FireAt: fire}}
	leases, next, err := AckTurnNext(e.ctx, e.p, "a", item.LockToken, ack, nil, longLock, longLock)
	e.must(err, "ack a's first turn, continuing it")
	e.wantEqual(len(leases), 0, "leases")
	if next != nil {
		t.Fatalf("ack continuing with only a timer queued: got a next turn with %d messages, want none", len(next.Messages))
	}
	e.wantEqual(len(e.history("a")), 2, "a's history")
	e.fetchNone()
	e.enqueue(externalItem("a", "x"))
	again := e.fetch()
	e.wantEqual(kinds(again.Messages), []provider.WorkItemKind{provider.WorkExternalRaised}, "a's next messages, fetched")
}

// turnAckContinuesContinueAsNew: the ContinueAsNew message a turn queues
// for its own instance is its next turn.
func turnAckContinuesContinueAsNew(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "x"))
	item := e.fetch()
	ack := provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{
		event(item, 1, provider.EventExternalRaised), event(item, 2, provider.EventOrchestrationContinuedAsNew)}}
	ack.Metadata.Status, ack.Metadata.Output = provider.StatusContinuedAsNew, `"next"`
	ack.OrchestratorItems = []provider.WorkItem{{Kind: provider.WorkContinueAsNew, Instance: "a", Name: orchName, Input: `"next"`}}
	_, next, err := AckTurnNext(e.ctx, e.p, "a", item.LockToken, ack, nil, longLock, longLock)
	e.must(err, "ack a's turn that continues as new, continuing it")
	if next == nil {
		t.Fatal("ack continuing a continue-as-new: no next turn")
	}
	e.wantEqual(kinds(next.Messages), []provider.WorkItemKind{provider.WorkContinueAsNew}, "the next turn's messages")
	e.wantEqual(next.Status, provider.StatusContinuedAsNew, "the status it reports of execution 1")
	e.fetchNone()
	e.ack(next, provider.OrchestrationAck{ExecutionID: 2,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted, Name: orchName}},
		Metadata:     provider.ExecutionMetadata{OrchestrationName: orchName}})
	info := e.info("a")
	e.wantEqual(info.CurrentExecutionID, int64(2), "a's execution after the continued turn")
	e.wantEqual(info.Status, provider.StatusRunning, "its status")
}

// turnAckContinuingStaleToken: a spent token commits nothing and locks
// nothing; the instance's messages stay for whoever holds it next.
func turnAckContinuingStaleToken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true}), "abandon")
	leases, next, err := AckTurnNext(e.ctx, e.p, "a", item.LockToken, scheduleTurn(item), []int{0}, longLock, longLock)
	e.wantErr(err, provider.ErrLockNotHeld, "ack continuing with a released token")
	if len(leases) != 0 || next != nil {
		t.Fatalf("ack continuing with a released token: %d leases, next turn %v; want none", len(leases), next != nil)
	}
	e.fetchWorkNone()
	again := e.fetch()
	e.wantEqual(kinds(again.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "a's start, still queued")
	e.wantEqual(len(e.history("a")), 0, "a's history")
}

// eagerStartLocksFreeInstance: the start comes back as a's first turn,
// locked, and no fetch finds it again.
func eagerStartLocksFreeInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("b"))
	turn, err := StartLocking(e.ctx, e.p, startItem("a"), provider.IDReuseFail, longLock)
	e.must(err, "start a eagerly")
	if turn == nil {
		t.Fatal("eager start of a free instance: no turn")
	}
	e.wantEqual(turn.Instance, "a", "the started instance")
	e.wantEqual(turn.Exists, false, "a exists before its first turn")
	e.wantEqual(kinds(turn.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "its messages")
	e.wantEqual(turn.AttemptCount, 1, "its attempt")
	e.wantEqual(e.fetch().Instance, "b", "another fetch finds only b")
	e.fetchNone()
	e.ack(turn, firstTurn(turn))
	e.wantEqual(len(e.history("a")), 1, "a's history after the eager turn")
}

// eagerStartLeavesLockedInstance: a start of an ID a fetch holds (for a
// message queued before any start) is queued and locks nothing.
func eagerStartLeavesLockedInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(externalItem("a", "x"))
	held := e.fetch()
	turn, err := StartLocking(e.ctx, e.p, startItem("a"), provider.IDReuseFail, longLock)
	e.must(err, "start a while a fetch holds it")
	if turn != nil {
		t.Fatalf("eager start of a locked instance: got a turn with token %q, want nil", turn.LockToken)
	}
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: held.LockToken, IgnoreAttempt: true}), "abandon")
	again := e.fetch()
	e.wantEqual(kinds(again.Messages), []provider.WorkItemKind{provider.WorkExternalRaised, provider.WorkStartOrchestration}, "the event and the start, queued")
}

func eagerStartInvalidItem(t *testing.T, f Factory) {
	e := newEnv(t, f)
	bad := startItem("a")
	bad.Name = ""
	turn, err := StartLocking(e.ctx, e.p, bad, provider.IDReuseFail, longLock)
	e.wantErr(err, provider.ErrInvalidArgument, "eager start without an orchestration name")
	if turn != nil {
		t.Fatal("an invalid eager start returned a turn")
	}
	_, err = StartLocking(e.ctx, e.p, startItem("a"), provider.IDReuseFail, -time.Second)
	e.wantErr(err, provider.ErrInvalidArgument, "eager start with a negative lock timeout")
	_, err = e.p.StartInstance(e.ctx, provider.StartRequest{Start: startItem("a"), Events: []provider.WorkItem{externalItem("a", "go")},
		LockFor: longLock})
	e.wantErr(err, provider.ErrInvalidArgument, "eager start with events")
	e.fetchNone()
}
