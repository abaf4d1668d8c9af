package providertest

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func cancellationCases() []Case {
	return []Case{
		{Name: "FetchReportsRunning", Run: func(t *testing.T, f Factory) { fetchReportsState(t, f, "", provider.StateRunning) }},
		{Name: "FetchReportsCompleted", Run: func(t *testing.T, f Factory) {
			fetchReportsState(t, f, provider.StatusCompleted, provider.StateCompleted)
		}},
		{Name: "FetchReportsFailed", Run: func(t *testing.T, f Factory) { fetchReportsState(t, f, provider.StatusFailed, provider.StateFailed) }},
		{Name: "FetchReportsTerminated", Run: func(t *testing.T, f Factory) {
			fetchReportsState(t, f, provider.StatusTerminated, provider.StateTerminated)
		}},
		{Name: "FetchReportsContinuedAsNew", Run: fetchReportsContinuedAsNew},
		{Name: "FetchReportsMissingAfterDelete", Run: fetchReportsMissing},
		{Name: "RenewReportsRunning", Run: func(t *testing.T, f Factory) { renewReportsState(t, f, "", provider.StateRunning) }},
		{Name: "RenewReportsCompleted", Run: func(t *testing.T, f Factory) {
			renewReportsState(t, f, provider.StatusCompleted, provider.StateCompleted)
		}},
		{Name: "RenewReportsFailed", Run: func(t *testing.T, f Factory) { renewReportsState(t, f, provider.StatusFailed, provider.StateFailed) }},
		{Name: "RenewReportsContinuedAsNew", Run: renewReportsContinuedAsNew},
		{Name: "RenewReportsMissingAfterDelete", Run: renewReportsMissing},
		{Name: "AckRemovesCancelledQueuedActivity", Run: ackRemovesCancelledQueued},
		{Name: "AckRemovesCancelledLockedActivity", Run: ackRemovesCancelledLocked},
		{Name: "RenewOfCancelledItemFails", Run: renewOfCancelledFails},
		{Name: "AbandonOfCancelledItemFails", Run: abandonOfCancelledFails},
		{Name: "CancellingMissingActivityIsNoOp", Run: cancellingMissingIsNoOp},
		{Name: "ScheduledAndCancelledInSameTurnNeverRuns", Run: scheduledAndCancelledSameTurn},
		{Name: "CancellationTouchesOnlyNamedActivity", Run: cancellationOnlyNamed},
	}
}

// fetchReportsState schedules an activity, moves the instance to status (if
// set) and checks the state a worker sees on fetch.
func fetchReportsState(t *testing.T, f Factory, status provider.ExecutionStatus, want provider.ExecutionState) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	if status != "" {
		e.finish("a", status, `"x"`)
	}
	e.wantEqual(e.fetchWork().State, want, "state on fetch")
}

func renewReportsState(t *testing.T, f Factory, status provider.ExecutionStatus, want provider.ExecutionState) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	lease := e.fetchWork()
	e.wantEqual(lease.State, provider.StateRunning, "state on fetch")
	if status != "" {
		e.finish("a", status, `"x"`)
	}
	state, err := e.p.RenewWorkItemLock(e.ctx, provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: longLock})
	e.must(err, "renew")
	e.wantEqual(state, want, "state on renew")
}

func fetchReportsContinuedAsNew(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	e.continueAsNew("a")
	e.wantEqual(e.fetchWork().State, provider.StateContinuedAsNew, "state on fetch")
}

func renewReportsContinuedAsNew(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	lease := e.fetchWork()
	e.continueAsNew("a")
	state, err := e.p.RenewWorkItemLock(e.ctx, provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: longLock})
	e.must(err, "renew")
	e.wantEqual(state, provider.StateContinuedAsNew, "state on renew")
}

func fetchReportsMissing(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	_, err := e.a.DeleteInstances(e.ctx, provider.DeleteRequest{Instances: []string{"a"}, Force: true})
	e.must(err, "force delete")
	e.wantEqual(e.depths().Worker, 0, "work items left by the delete")
	e.enqueueWork(activityItem("a", 1, 3)) // e.g. enqueued by a worker racing the delete
	e.wantEqual(e.fetchWork().State, provider.StateMissing, "state of an activity whose instance was deleted")
}

func renewReportsMissing(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("gone", 1, 1))
	lease := e.fetchWork()
	state, err := e.p.RenewWorkItemLock(e.ctx, provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: longLock})
	e.must(err, "renew")
	e.wantEqual(state, provider.StateMissing, "state on renew")
}

func cancel(instance string, exec, id int64) []provider.ActivityRef {
	return []provider.ActivityRef{{Instance: instance, ExecutionID: exec, ActivityID: id}}
}

func ackRemovesCancelledQueued(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledActivities = cancel("a", 1, 2)
	})
	e.fetchWorkNone()
}

func ackRemovesCancelledLocked(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	lease := e.fetchWork()
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledActivities = cancel("a", 1, 2)
	})
	e.wantErr(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 2)), provider.ErrLockNotHeld, "ack of cancelled item")
	e.wantEqual(e.depths().Orchestrator, 0, "completion of cancelled item enqueued")
}

func renewOfCancelledFails(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	lease := e.fetchWork()
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledActivities = cancel("a", 1, 2)
	})
	_, err := e.p.RenewWorkItemLock(e.ctx, provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: longLock})
	e.wantErr(err, provider.ErrLockNotHeld, "renew of cancelled item")
}

func abandonOfCancelledFails(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	lease := e.fetchWork()
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledActivities = cancel("a", 1, 2)
	})
	e.wantErr(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken}), provider.ErrLockNotHeld, "abandon of cancelled item")
	e.fetchWorkNone()
}

func cancellingMissingIsNoOp(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledActivities = cancel("a", 1, 42)
	})
	e.wantEqual(len(e.history("a")), 2, "history after a turn cancelling nothing")
}

func scheduledAndCancelledSameTurn(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.WorkerItems = []provider.WorkItem{activityItem("a", 1, 2)}
		ack.CancelledActivities = cancel("a", 1, 2)
	})
	e.fetchWorkNone()
}

func cancellationOnlyNamed(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.create("b")
	e.schedule("a", 2, 3)
	e.schedule("b", 2)
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledActivities = cancel("a", 1, 2)
	})
	var left []string
	for {
		lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: time.Minute})
		e.must(err, "fetch work")
		if lease == nil {
			break
		}
		left = append(left, lease.Item.Instance+"/"+string(rune('0'+lease.Item.ID)))
	}
	e.wantEqual(left, []string{"a/3", "b/2"}, "activities left")
}
