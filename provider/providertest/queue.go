package providertest

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func queueCases() []Case {
	return []Case{
		{Name: "WorkerQueueIsFIFO", Run: workerQueueFIFO},
		{Name: "PeekLockKeepsItemUntilAck", Run: peekLockKeepsItem},
		{Name: "WorkerAckWithCompletionIsAtomic", Run: workerAckWithCompletion},
		{Name: "TimerInvisibleUntilDue", Run: timerInvisibleUntilDue},
		{Name: "TimerDeliveredWhenDue", Run: timerDeliveredWhenDue},
		{Name: "DelayedOrchestratorMessageInvisible", Run: delayedOrchestratorMessage},
		{Name: "DelayedWorkerItemsSkippedUntilVisible", Run: delayedWorkerItemsSkipped},
		{Name: "LostTokenItemRedelivered", Run: lostTokenRedelivered},
		{Name: "MessagesForMissingInstanceDropped", Run: messagesForMissingInstanceDropped},
		{Name: "CompletionRoutedToNamedInstance", Run: completionRoutedToInstance},
	}
}

func workerQueueFIFO(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for id := int64(1); id <= 5; id++ {
		e.enqueueWork(activityItem("a", 1, id))
	}
	var got []int64
	for range 5 {
		got = append(got, e.fetchWork().Item.ID)
	}
	e.wantEqual(got, []int64{1, 2, 3, 4, 5}, "fetch order")
}

func peekLockKeepsItem(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWork()
	e.wantEqual(e.depths().Locked, 1, "locked items while held")
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	e.wantEqual(e.depths(), provider.QueueDepths{}, "queue depths after ack")
}

func workerAckWithCompletion(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.schedule("a", 2)
	lease := e.fetchWork()
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 2)), "ack with completion")
	e.wantEqual(e.depths().Worker+e.depths().Locked, 0, "worker items after ack")
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkActivityCompleted}, "completion delivered")
	e.wantEqual(item.Messages[0].ID, 2, "completion's activity ID")
}

func timerInvisibleUntilDue(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.OrchestratorItems = []provider.WorkItem{{Kind: provider.WorkTimerFired, Instance: "a", ExecutionID: 1, ID: 2,
			FireAt: time.Now().Add(time.Hour).UnixMilli()}}
	})
	e.fetchNone()
	e.wantEqual(e.depths().Delayed, 1, "delayed messages")
}

func timerDeliveredWhenDue(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	fireAt := time.Now().Add(300 * time.Millisecond)
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.OrchestratorItems = []provider.WorkItem{{Kind: provider.WorkTimerFired, Instance: "a", ExecutionID: 1, ID: 2, FireAt: fireAt.UnixMilli()}}
	})
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{LockFor: longLock, PollFor: time.Minute})
	e.must(err, "fetch timer")
	if item == nil {
		t.Fatal("timer never delivered")
	}
	if now := time.Now(); now.Before(fireAt.Add(-10 * time.Millisecond)) {
		t.Fatalf("timer due at %v delivered early at %v", fireAt, now)
	}
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkTimerFired}, "timer message")
}

func delayedOrchestratorMessage(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.must(e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: startItem("a"), Delay: time.Hour}), "enqueue with delay")
	e.fetchNone()
	e.wantEqual(e.depths().Delayed, 1, "delayed messages")
}

func delayedWorkerItemsSkipped(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.must(e.p.EnqueueForWorker(e.ctx, provider.EnqueueRequest{Item: activityItem("a", 1, 1), Delay: time.Hour}), "enqueue delayed")
	e.enqueueWork(activityItem("a", 1, 2))
	e.wantEqual(e.fetchWork().Item.ID, 2, "item fetched past the delayed one")
	e.fetchWorkNone()
}

func lostTokenRedelivered(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	e.fetchWorkLock(shortLock) // the holder loses its token and never acks
	time.Sleep(pastShortLock)
	lease := e.fetchWork()
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack by the second holder")
	e.fetchWorkNone()
}

func messagesForMissingInstanceDropped(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(*completionItem("never-started", 1, 1))
	item := e.fetch()
	e.wantEqual([]any{item.Exists, item.OrchestrationName}, []any{false, ""}, "item of missing instance")
	e.ack(item, provider.OrchestrationAck{ExecutionID: 1})
	e.wantEqual(e.exists("never-started"), false, "instance created by dropping its messages")
	e.wantEqual(e.depths(), provider.QueueDepths{}, "queue depths after drop")
}

func completionRoutedToInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("parent")
	e.enqueue(provider.WorkItem{Kind: provider.WorkSubOrchCompleted, Instance: "parent", ExecutionID: 1, ID: 5, Result: `"r"`})
	item := e.fetch()
	e.wantEqual(item.Instance, "parent", "instance receiving the child's completion")
	e.wantEqual(item.Messages[0].ID, 5, "parent scheduling ID")
}
