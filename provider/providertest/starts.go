package providertest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// Starts: StartInstance decides in the store whether an instance ID may be
// started, under its ID-reuse policy, in the transaction that queues the start.
func startCases() []Case {
	return []Case{
		{Name: "StartQueuesStartThenEvents", Run: startQueuesStartThenEvents},
		{Name: "StartOfQueuedIDRefused", Run: startOfQueuedIDRefused},
		{Name: "StartOfExistingIDRefused", Run: startOfExistingIDRefused},
		{Name: "RetryWithSameOwnerQueuesNothing", Run: retryWithSameOwner},
		{Name: "RetryLeavesTheTurnInFlight", Run: retryLeavesTurnInFlight},
		{Name: "AllowFinishedReplacesFinishedInstance", Run: allowFinishedReplacesFinished},
		{Name: "AllowFinishedRefusesRunningInstance", Run: allowFinishedRefusesRunning},
		{Name: "AllowFinishedRefusesWhileChildRuns", Run: allowFinishedRefusesWhileChildRuns},
		{Name: "TerminateRunningReplacesRunningInstance", Run: terminateRunningReplacesRunning},
		{Name: "TerminateRunningReplacesQueuedStart", Run: terminateRunningReplacesQueuedStart},
		{Name: "SubOrchestrationNeverReplaced", Run: subOrchestrationNeverReplaced},
		{Name: "InvalidStartRefused", Run: invalidStartRefused},
		{Name: "EagerStartOfTakenIDRefused", Run: eagerStartOfTakenIDRefused, Path: PathEagerStart},
		{Name: "ConcurrentStartsAdmitOne", Run: concurrentStartsAdmitOne},
		{Name: "StartRacingDirectStartAdmitsOne", Run: startRacingDirectStart, Path: PathDirectStart},
	}
}

func (e *env) start(item provider.WorkItem, reuse provider.IDReusePolicy, events ...provider.WorkItem) error {
	return Start(e.ctx, e.p, item, events, reuse)
}

// wantTaken fails unless err is an *AlreadyExistsError naming status, whose
// Why contains why.
func (e *env) wantTaken(err error, status provider.ExecutionStatus, why, what string) *provider.AlreadyExistsError {
	e.t.Helper()
	var taken *provider.AlreadyExistsError
	if !errors.Is(err, provider.ErrAlreadyExists) || !errors.As(err, &taken) {
		e.t.Fatalf("%s: got error %v, want an *AlreadyExistsError", what, err)
	}
	if taken.Status != status || !strings.Contains(taken.Why, why) || (why == "" && taken.Why != "") {
		e.t.Fatalf("%s: holder %+v, want status %q and why %q", what, taken, status, why)
	}
	return taken
}

// ownedFirstTurn is firstTurn recording the owner the start carries.
func ownedFirstTurn(item *provider.OrchestrationItem) provider.OrchestrationAck {
	ack := firstTurn(item)
	ack.HistoryDelta[0].Owner = item.Messages[0].Owner
	return ack
}

func startQueuesStartThenEvents(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.must(e.start(startItem("a"), provider.IDReuseFail, externalItem("a", "x"), externalItem("a", "y")), "start a with events")
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration, provider.WorkExternalRaised,
		provider.WorkExternalRaised}, "a's messages")
	e.wantEqual(item.Messages[1].Name+item.Messages[2].Name, "xy", "the events, in order")
}

func startOfQueuedIDRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.must(e.start(startItem("a"), ""), "start a")
	err := e.start(startItem("a"), "", externalItem("a", "x"))
	taken := e.wantTaken(err, "", "", "start of a queued ID")
	e.wantEqual(taken.Instance, "a", "the taken ID")
	e.wantEqual(taken.Error(), "instance already exists (Pending)", "the error")
	e.wantEqual(kinds(e.fetch().Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "a's messages: the first start only")
}

func startOfExistingIDRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.wantTaken(e.start(startItem("a"), provider.IDReuseFail), provider.StatusRunning, "", "start of a running instance")
	e.finish("a", provider.StatusCompleted, `"done"`)
	e.wantTaken(e.start(startItem("a"), provider.IDReuseFail), provider.StatusCompleted, "", "start of a completed instance")
	e.fetchNone()
	e.wantEqual(e.info("a").Status, provider.StatusCompleted, "a's status")
	e.wantEqual(len(e.history("a")), 3, "a's history")
}

// retryWithSameOwner: a start whose owner is the one that holds the ID is a
// retry of that start and succeeds without queuing anything, before and after
// the first turn; another owner is refused and told whose it is.
func retryWithSameOwner(t *testing.T, f Factory) {
	e := newEnv(t, f)
	mine := startItem("a")
	mine.Owner = "me"
	e.must(e.start(mine, provider.IDReuseFail), "start a")
	e.must(e.start(mine, provider.IDReuseTerminateRunning, externalItem("a", "x")), "retry a's start while queued")
	theirs := startItem("a")
	theirs.Owner = "them"
	taken := e.wantTaken(e.start(theirs, provider.IDReuseFail), "", "", "another owner's start")
	e.wantEqual(taken.Owner, "me", "the holder's owner")
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "a's messages")
	e.ack(item, ownedFirstTurn(item))
	e.must(e.start(mine, provider.IDReuseAllowFinished), "retry a's start once it runs")
	e.finish("a", provider.StatusCompleted, `"done"`)
	e.must(e.start(mine, provider.IDReuseAllowFinished), "retry a's start once it completed")
	e.fetchNone()
	e.wantEqual(len(e.history("a")), 3, "a's history, kept")
	taken = e.wantTaken(e.start(theirs, provider.IDReuseFail), provider.StatusCompleted, "", "another owner's start")
	e.wantEqual(taken.Error(), "instance already exists (Completed; started by me)", "the error")
}

// retryLeavesTurnInFlight: a retry under a policy that could replace the
// instance touches nothing; the turn a dispatcher is running still commits.
func retryLeavesTurnInFlight(t *testing.T, f Factory) {
	e := newEnv(t, f)
	mine := startItem("a")
	mine.Owner = "me"
	e.must(e.start(mine, ""), "start a")
	first := e.fetch()
	e.must(e.start(mine, provider.IDReuseTerminateRunning), "retry a's start during its first turn")
	e.ack(first, ownedFirstTurn(first))
	e.enqueue(externalItem("a", "x"))
	next := e.fetch()
	e.must(e.start(mine, provider.IDReuseTerminateRunning), "retry a's start during a turn")
	e.ack(next, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{event(next, 1, provider.EventExternalRaised)}})
	e.wantEqual(len(e.history("a")), 2, "a's history")
}

func allowFinishedReplacesFinished(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, status := range []provider.ExecutionStatus{provider.StatusCompleted, provider.StatusFailed, provider.StatusTerminated} {
		e.create("a")
		e.finish("a", status, `"done"`)
		e.enqueue(externalItem("a", "stray"))
		e.must(e.start(startItem("a"), provider.IDReuseAllowFinished, externalItem("a", "x")), "start over a "+string(status)+" a")
		e.wantEqual(e.exists("a"), false, "a exists before the new start's turn")
		e.wantEqual(len(e.history("a")), 0, "a's history before the new start's turn")
		item := e.fetch()
		e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration, provider.WorkExternalRaised},
			"the new start's messages, without the old ones")
		e.wantEqual(item.Exists, false, "the new start's turn sees an instance")
		e.ack(item, firstTurn(item))
		e.wantEqual(e.info("a").Status, provider.StatusRunning, "the new a's status")
		e.wantEqual(len(e.history("a")), 1, "the new a's history")
		e.finish("a", provider.StatusCompleted, `"again"`) // for the next round
		_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}})
		e.must(err, "delete a")
	}
}

func allowFinishedRefusesRunning(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.wantTaken(e.start(startItem("a"), provider.IDReuseAllowFinished), provider.StatusRunning, "", "allow-finished start of a running a")
	e.continueAsNew("a")
	e.wantTaken(e.start(startItem("a"), provider.IDReuseAllowFinished), provider.StatusRunning, "", "allow-finished start of a continued a")
	e.must(e.start(startItem("b"), ""), "start b")
	e.wantTaken(e.start(startItem("b"), provider.IDReuseAllowFinished), "", "", "allow-finished start of a queued b")
	e.wantEqual(e.info("a").CurrentExecutionID, 2, "a's execution")
	item := e.fetch()
	e.wantEqual(item.Instance+" "+fmt.Sprint(kinds(item.Messages)), "b [StartOrchestration]", "what is queued")
	e.fetchNone()
}

func allowFinishedRefusesWhileChildRuns(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("p")
	e.createChild("c", "p")
	e.finish("p", provider.StatusCompleted, `"done"`)
	e.wantTaken(e.start(startItem("p"), provider.IDReuseAllowFinished), provider.StatusCompleted,
		"sub-orchestrations c still run", "allow-finished start of p while its child runs")
	e.wantEqual(e.exists("c"), true, "c exists")
	e.finish("c", provider.StatusCompleted, `"done"`)
	e.must(e.start(startItem("p"), provider.IDReuseAllowFinished), "allow-finished start of p once c finished")
	e.wantEqual(e.exists("c"), false, "c, deleted with p")
}

// terminateRunningReplacesRunning: the running instance goes with its
// children, queued messages and activities; its in-flight turn and activity
// cannot commit afterwards.
func terminateRunningReplacesRunning(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.createChild("c", "a")
	e.schedule("a", 2)
	lease := e.fetchWork()
	e.enqueue(externalItem("a", "x"))
	inFlight := e.fetchInstance("a")
	e.must(e.start(startItem("a"), provider.IDReuseTerminateRunning), "terminate-running start of a")
	e.wantEqual(e.exists("a"), false, "the old a exists")
	e.wantEqual(e.exists("c"), false, "the old a's child exists")
	late := provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{event(inFlight, 1, provider.EventExternalRaised)}}
	e.wantErr(AckTurn(e.ctx, e.p, inFlight.LockToken, late), provider.ErrLockNotHeld, "ack of the old a's turn")
	e.wantErr(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 2)), provider.ErrLockNotHeld, "ack of the old a's activity")
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "the new a's messages")
	e.wantEqual(item.Exists, false, "the new start's turn sees an instance")
	e.ack(item, firstTurn(item))
	e.wantEqual(len(e.history("a")), 1, "the new a's history")
	e.fetchWorkNone()
}

func terminateRunningReplacesQueuedStart(t *testing.T, f Factory) {
	e := newEnv(t, f)
	first := startItem("a")
	first.Input = `"first"`
	e.must(e.start(first, ""), "start a")
	inFlight := e.fetch()
	second := startItem("a")
	second.Input = `"second"`
	e.must(e.start(second, provider.IDReuseTerminateRunning), "terminate-running start of a queued a")
	e.wantErr(AckTurn(e.ctx, e.p, inFlight.LockToken, firstTurn(inFlight)), provider.ErrLockNotHeld, "ack of the first start's turn")
	item := e.fetch()
	e.wantEqual(len(item.Messages), 1, "a's messages")
	e.wantEqual(item.Messages[0].Input, `"second"`, "the start that is queued")
}

func subOrchestrationNeverReplaced(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("p")
	e.createChild("c", "p")
	e.finish("c", provider.StatusCompleted, `"done"`)
	for _, reuse := range []provider.IDReusePolicy{provider.IDReuseAllowFinished, provider.IDReuseTerminateRunning} {
		e.wantTaken(e.start(startItem("c"), reuse), provider.StatusCompleted, `sub-orchestration of "p"`, string(reuse)+" start of a child")
	}
	e.wantEqual(len(e.history("c")), 3, "c's history")
}

func invalidStartRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.wantErr(e.start(startItem("a"), "Sometimes"), provider.ErrInvalidArgument, "unknown policy")
	e.wantErr(e.start(externalItem("a", "x"), ""), provider.ErrInvalidArgument, "an event as the start")
	e.wantErr(e.start(startItem("a"), "", externalItem("b", "x")), provider.ErrInvalidArgument, "an event for another instance")
	e.wantErr(e.start(startItem("a"), "", startItem("a")), provider.ErrInvalidArgument, "a start as an event")
	e.fetchNone()
}

func eagerStartOfTakenIDRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.finish("a", provider.StatusCompleted, `"done"`)
	turn, err := StartLocking(e.ctx, e.p, startItem("a"), "", longLock)
	e.wantTaken(err, provider.StatusCompleted, "", "eager start of a completed a")
	if turn != nil {
		t.Fatal("a refused eager start returned a turn")
	}
	e.fetchNone()
	turn, err = StartLocking(e.ctx, e.p, startItem("a"), provider.IDReuseAllowFinished, longLock)
	e.must(err, "eager allow-finished start of a completed a")
	if turn == nil || turn.Exists || len(turn.Messages) != 1 {
		t.Fatalf("eager allow-finished start: turn %+v, want the new a's first turn", turn)
	}
	e.ack(turn, firstTurn(turn))
	e.wantEqual(len(e.history("a")), 1, "the new a's history")
}

// concurrentStartsAdmitOne: starts of one ID from several handles at once
// (processes, on a shared store): one is queued, the others refused.
func concurrentStartsAdmitOne(t *testing.T, f Factory) {
	e := newEnv(t, f)
	hs := handles(e, true)
	for round := range 5 {
		id := fmt.Sprintf("a%d", round)
		errs := make([]error, len(hs))
		var wg sync.WaitGroup
		for i, h := range hs {
			wg.Go(func() {
				start := startItem(id)
				start.Owner = fmt.Sprintf("owner-%d", i)
				errs[i] = Start(e.ctx, h, start, nil, provider.IDReuseFail)
			})
		}
		wg.Wait()
		admitted := 0
		for _, err := range errs {
			switch {
			case err == nil:
				admitted++
			case !errors.Is(err, provider.ErrAlreadyExists):
				t.Fatalf("concurrent start of %s: %v", id, err)
			}
		}
		e.wantEqual(admitted, 1, "starts of "+id+" admitted")
		e.wantEqual(len(e.fetchInstance(id).Messages), 1, id+"'s messages")
	}
}

// startRacingDirectStart: a queued start and a direct start (a first turn
// committed as the start) of one ID never both find it free.
func startRacingDirectStart(t *testing.T, f Factory) {
	e := newEnv(t, f)
	peer := e.f.OpenPeer(e.t, e.p)
	direct := peer
	for round := range 10 {
		id := fmt.Sprintf("a%d", round)
		var created bool
		var directErr, startErr error
		var wg sync.WaitGroup
		wg.Go(func() { created, _, directErr = CommitFirstTurn(e.ctx, direct, id, directFirstTurn(id), nil, longLock) })
		wg.Go(func() { startErr = e.start(startItem(id), provider.IDReuseFail) })
		wg.Wait()
		e.must(directErr, "direct start of "+id)
		switch {
		case created && startErr == nil:
			t.Fatalf("%s: both the direct start and the queued start went through", id)
		case !created && startErr != nil:
			t.Fatalf("%s: neither start went through: %v", id, startErr)
		case created:
			e.wantTaken(startErr, provider.StatusRunning, "", "queued start after a direct one")
		}
	}
}
