package providertest

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// The turns a fetch FromCache builds from the cache for the
// timers a provider's own acks queued: one per instance, delivering every
// timer of it that fell due; one for each timer of an ack; none for a timer
// a later ack cancelled.

// fetchCachedWhenDue fetches with FetchRequest.FromCache as timers
// due at due fall due. Its first try, just before, is the look for ready
// work a fetch owes once work was announced; the try at due then finds the
// timers noted, unless the look ran past the provider's poll interval (a
// look takes due timers by lock).
func (e *env) fetchCachedWhenDue(due time.Time, poll time.Duration) []*provider.OrchestrationItem {
	e.t.Helper()
	time.Sleep(time.Until(due.Add(-25 * time.Millisecond)))
	items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 4, LockFor: longLock, PollFor: poll, FromCache: true})
	e.must(err, "fetch, cached")
	return items
}

// untilCached runs attempt, on a new instance each time, until it reports
// that every turn it fetched was built from the cache; a look for ready work
// that ran late takes due timers by lock instead, which is right but not
// what the case checks. It fails after three attempts.
func (e *env) untilCached(attempt func(instance string) (cached bool)) {
	e.t.Helper()
	for _, instance := range []string{"a", "b", "c"} {
		if attempt(instance) {
			return
		}
	}
	e.t.Fatal("no attempt got its timers' turns from the cache")
}

// firingAll is the ack of a turn delivering timers: TimerFired for each.
func firingAll(turn *provider.OrchestrationItem) provider.OrchestrationAck {
	ack := provider.OrchestrationAck{ExecutionID: turn.ExecutionID}
	for i, m := range turn.Messages {
		fired := event(turn, int64(i)+1, provider.EventTimerFired)
		fired.SourceID = m.ID
		ack.HistoryDelta = append(ack.HistoryDelta, fired)
	}
	return ack
}

// commitFiring commits the turn delivering timers, cached or locked.
func (e *env) commitFiring(turn *provider.OrchestrationItem) {
	e.t.Helper()
	if !turn.Cached {
		e.ack(turn, firingAll(turn))
		return
	}
	_, err := CommitCachedTurn(e.ctx, e.p, "", turn, firingAll(turn), nil, longLock)
	e.must(err, "commit the cached turn of "+turn.Instance)
}

// Two timers of one instance, queued by two acks, fall due together: one
// cached turn delivers both and commits (a turn for each would find the
// other's timer waiting, and both would be stale).
func cachedFetchTimersDueTogether(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.untilCached(func(instance string) bool {
		e.create(instance)
		due := time.Now().Add(300 * time.Millisecond)
		for _, id := range []int64{3, 4} {
			e.turn(instance, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
				ack.OrchestratorItems = []provider.WorkItem{timerItem(instance, item.ExecutionID, id, due)}
			})
		}
		items := e.fetchCachedWhenDue(due, time.Second)
		if len(items) != 1 {
			t.Fatalf("the fetch at the timers' due time returned %d turns, want one delivering both", len(items))
		}
		e.wantEqual(messageIDs(items[0].Messages), []int64{3, 4}, "the turn's timers")
		e.commitFiring(items[0])
		e.wantEqual(e.depths().Orchestrator+e.depths().Delayed, 0, "messages left")
		e.fetchNone()
		return items[0].Cached
	})
}

// Each timer an ack queues is noted, not only its earliest: both timers'
// turns are built from the cache as they fall due.
func cachedFetchEveryTimerOfAnAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.untilCached(func(instance string) bool {
		e.create(instance)
		first := time.Now().Add(300 * time.Millisecond)
		second := first.Add(300 * time.Millisecond)
		e.turn(instance, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
			ack.OrchestratorItems = []provider.WorkItem{timerItem(instance, item.ExecutionID, 4, second),
				timerItem(instance, item.ExecutionID, 3, first)}
		})
		cached := true
		for _, timer := range []struct {
			id  int64
			due time.Time
		}{{3, first}, {4, second}} {
			items := e.fetchCachedWhenDue(timer.due, time.Second)
			if len(items) != 1 {
				t.Fatalf("the fetch at timer %d's due time returned %d turns, want one", timer.id, len(items))
			}
			e.wantEqual(messageIDs(items[0].Messages), []int64{timer.id}, "the turn's timers")
			e.commitFiring(items[0])
			cached = cached && items[0].Cached
		}
		e.fetchNone()
		return cached
	})
}

// A timer a later ack cancels is forgotten: at its due time no turn is
// built for it (its message is gone; the turn's commit would be stale).
func cachedFetchForgetsCancelledTimer(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	due := time.Now().Add(300 * time.Millisecond)
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.OrchestratorItems = []provider.WorkItem{timerItem("a", item.ExecutionID, 3, due)}
	})
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.CancelledTimers = []provider.TimerRef{{ExecutionID: item.ExecutionID, TimerID: 3}}
	})
	if items := e.fetchCachedWhenDue(due, 300*time.Millisecond); len(items) > 0 {
		t.Fatalf("the fetch at the cancelled timer's due time returned a turn of %s (cached %v) with %d messages",
			items[0].Instance, items[0].Cached, len(items[0].Messages))
	}
}
