package providertest

import (
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func atomicityCases() []Case {
	return []Case{
		{Name: "FailedAckRollsBackEverything", Run: failedAckRollsBackEverything},
		{Name: "MultiPartAckCommitsAllParts", Run: multiPartAckCommitsAllParts},
		{Name: "LockReleasedOnlyBySuccessfulAck", Run: lockReleasedOnlyBySuccessfulAck},
		{Name: "ConcurrentAcksWithOneTokenExactlyOneWins", Run: concurrentAcksOneTokenOneWins},
		{Name: "FailedWorkerAckEnqueuesNothing", Run: failedWorkerAckEnqueuesNothing},
	}
}

// A duplicate event ID in an otherwise full ack must leave no trace of any part.
func failedAckRollsBackEverything(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "go"))
	item := e.fetch()
	before := e.depths()
	err := AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{
		ExecutionID: 1,
		HistoryDelta: []provider.Event{
			event(item, 1, provider.EventExternalRaised),
			{ID: 1, Kind: provider.EventActivityScheduled}, // ID 1 is taken by OrchestrationStarted
		},
		WorkerItems:       []provider.WorkItem{activityItem("a", 1, 2)},
		OrchestratorItems: []provider.WorkItem{externalItem("other", "x")},
		Metadata:          provider.ExecutionMetadata{Status: provider.StatusCompleted, Output: "done", CustomStatus: &provider.CustomStatusUpdate{Value: "cs"}},
	})
	e.wantErr(err, provider.ErrDuplicateEvent, "ack with duplicate event")
	e.wantEqual(len(e.history("a")), 1, "history length after failed ack")
	info := e.info("a")
	e.wantEqual(info.Status, provider.StatusRunning, "status after failed ack")
	e.wantEqual(info.CustomStatusVersion, 0, "custom status version after failed ack")
	e.wantEqual(e.depths(), before, "queue depths after failed ack")
	// The fetched message is still there: abandon and fetch it again.
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	again := e.fetch()
	e.wantEqual(kinds(again.Messages), []provider.WorkItemKind{provider.WorkExternalRaised}, "messages after failed ack")
}

func multiPartAckCommitsAllParts(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "go"))
	item := e.fetch()
	fireAt := time.Now().Add(time.Hour).UnixMilli()
	e.ack(item, provider.OrchestrationAck{
		ExecutionID: 1,
		HistoryDelta: []provider.Event{
			event(item, 1, provider.EventExternalRaised),
			event(item, 2, provider.EventActivityScheduled),
			event(item, 3, provider.EventTimerCreated),
		},
		WorkerItems: []provider.WorkItem{activityItem("a", 1, 3)},
		OrchestratorItems: []provider.WorkItem{
			{Kind: provider.WorkTimerFired, Instance: "a", ExecutionID: 1, ID: 4, FireAt: fireAt},
			startItem("child"),
		},
		Metadata: provider.ExecutionMetadata{CustomStatus: &provider.CustomStatusUpdate{Value: "step-2"}},
	})
	e.wantEqual(eventIDs(e.history("a")), []int64{1, 2, 3, 4}, "history event IDs")
	e.wantEqual(*e.info("a").CustomStatus, "step-2", "custom status")
	d := e.depths()
	e.wantEqual(d.Worker, 1, "worker queue depth")
	e.wantEqual(d.Orchestrator, 1, "visible orchestrator messages (the child's start)")
	e.wantEqual(d.Delayed, 1, "delayed messages (the timer)")
	e.wantEqual(e.fetch().Instance, "child", "next fetch")
}

func lockReleasedOnlyBySuccessfulAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "go"))
	item := e.fetch()
	bad := provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventExternalRaised}}}
	e.wantErr(AckTurn(e.ctx, e.p, item.LockToken, bad), provider.ErrDuplicateEvent, "failing ack")
	e.fetchNone() // still locked by the failed ack's holder
	e.ack(item, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}})
	e.enqueue(externalItem("a", "next"))
	e.wantEqual(e.fetch().Instance, "a", "instance fetchable after successful ack")
}

func concurrentAcksOneTokenOneWins(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "go"))
	item := e.fetch()
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{
				ExecutionID:  1,
				HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)},
				WorkerItems:  []provider.WorkItem{activityItem("a", 1, int64(100+i))},
			})
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		e.wantErr(err, provider.ErrLockNotHeld, "losing ack")
	}
	e.wantEqual(wins, 1, "successful acks")
	e.wantEqual(len(e.history("a")), 2, "history length")
	e.wantEqual(e.depths().Worker, 1, "worker items enqueued")
}

func failedWorkerAckEnqueuesNothing(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	lease := e.fetchWorkLock(shortLock)
	time.Sleep(pastShortLock)
	err := AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 2))
	e.wantErr(err, provider.ErrLockNotHeld, "ack after expiry")
	e.wantEqual(e.depths().Orchestrator, 0, "orchestrator messages after failed worker ack")
}
