package providertest

import (
	"slices"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func timerCases() []Case {
	return []Case{
		{Name: "FutureTimerSurvivesEarlierAck", Run: futureTimerSurvivesEarlierAck},
		{Name: "AckDeletesCancelledTimer", Run: ackDeletesCancelledTimer},
		{Name: "AckDeletesOnlyNamedTimer", Run: ackDeletesOnlyNamedTimer},
		{Name: "TimerScheduledAndCancelledInSameTurnNeverFires", Run: timerScheduledAndCancelledSameTurn},
		{Name: "DueTimersDoNotStarveReadyWork", Run: dueTimersDoNotStarveReadyWork},
	}
}

func timerItem(instance string, exec, id int64, due time.Time) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkTimerFired, Instance: instance, ExecutionID: exec, ID: id, FireAt: due.UnixMilli()}
}

// A timer that is not due yet must be neither part of an earlier turn's item
// nor deleted by its ack; it is delivered once due.
func futureTimerSurvivesEarlierAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	due := time.Now().Add(1500 * time.Millisecond)
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.OrchestratorItems = []provider.WorkItem{timerItem("a", item.ExecutionID, 3, due)}
	})
	e.turn("a", nil) // a turn for an event while the timer waits
	e.wantEqual(e.depths().Delayed, 1, "timers waiting after the second turn's ack")
	time.Sleep(time.Until(due) + 50*time.Millisecond)
	item := e.fetchInstance("a")
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkTimerFired}, "messages once the timer is due")
	e.wantEqual(item.Messages[0].ID, int64(3), "timer ID")
}

func ackDeletesCancelledTimer(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.OrchestratorItems = []provider.WorkItem{timerItem("a", item.ExecutionID, 3, time.Now().Add(time.Hour))}
	})
	e.wantEqual(e.depths().Delayed, 1, "timers before the cancelling turn")
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledTimers = []provider.TimerRef{{ExecutionID: item.ExecutionID, TimerID: 3}}
	})
	e.wantEqual(e.depths().Delayed, 0, "timers after the cancelling turn")
}

func ackDeletesOnlyNamedTimer(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.create("b")
	later := time.Now().Add(time.Hour)
	for _, inst := range []string{"a", "b"} {
		e.turn(inst, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
			ack.OrchestratorItems = []provider.WorkItem{timerItem(inst, item.ExecutionID, 3, later), timerItem(inst, item.ExecutionID, 4, later)}
		})
	}
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledTimers = []provider.TimerRef{{ExecutionID: item.ExecutionID, TimerID: 3}, {ExecutionID: item.ExecutionID + 1, TimerID: 4}}
	})
	e.wantEqual(e.depths().Delayed, 3, "timers left: a/4 (other execution named) and both of b")
}

func timerScheduledAndCancelledSameTurn(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.OrchestratorItems = []provider.WorkItem{timerItem("a", item.ExecutionID, 3, time.Now())}
		ack.CancelledTimers = []provider.TimerRef{{ExecutionID: item.ExecutionID, TimerID: 3}}
	})
	e.fetchNone()
	e.wantEqual(e.depths().Delayed+e.depths().Orchestrator, 0, "messages left")
}

// A provider may take the turns of timers it queued itself by name when they
// fall due; ready work still gets its turn: with timers due, a message that
// was ready first is fetched within two fetches of one item each. A timer's
// turn comes with its whole history.
func dueTimersDoNotStarveReadyWork(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("b")
	timers := []string{"t1", "t2", "t3"}
	for _, inst := range timers {
		e.create(inst)
	}
	e.enqueue(externalItem("b", "x"))
	due := time.Now().Add(300 * time.Millisecond)
	for _, inst := range timers {
		e.turn(inst, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
			ack.OrchestratorItems = []provider.WorkItem{timerItem(inst, item.ExecutionID, 3, due)}
		})
	}
	time.Sleep(time.Until(due) + 50*time.Millisecond)
	var got []string
	for range 2 {
		items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 1, LockFor: longLock, PollFor: 0})
		e.must(err, "fetch")
		for _, it := range items {
			got = append(got, it.Instance)
			e.wantEqual(it.History, e.history(it.Instance), "history of "+it.Instance)
		}
	}
	if !slices.Contains(got, "b") {
		t.Fatalf("two fetches took %v; want b's event, ready before the timers fell due, among them", got)
	}
}
