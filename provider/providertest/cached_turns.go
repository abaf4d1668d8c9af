package providertest

import (
	"errors"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// A turn built from the history a provider caches (provider.FetchRequest.Deliver, provider.TurnCached)
// commits with its activity's ack only while nothing else changed the
// instance; otherwise nothing is written and the activity is still leased.
func cachedTurnCases() []Case {
	return []Case{
		{Name: "CachedTurnCommitsWithItsActivity", Run: cachedTurnCommits, Path: PathCachedTurn},
		{Name: "CachedTurnCarriesTheCustomStatus", Run: cachedTurnCustomStatus, Path: PathCachedTurn},
		{Name: "CachedTurnIsStaleWhenAMessageWaits", Run: cachedTurnStaleMessage, Path: PathCachedTurn},
		{Name: "CachedTurnIsStaleWhenLocked", Run: cachedTurnStaleLocked, Path: PathCachedTurn},
		{Name: "CachedTurnIsStaleAfterAPeersTurn", Run: cachedTurnStalePeer, Path: PathCachedTurn},
		{Name: "CachedTurnIsStaleOnceTheExecutionEndedWithoutAnEvent", Run: cachedTurnStaleEndedQuietly, Path: PathCachedTurn},
		{Name: "CachedTurnWithLostLeaseCommitsNothing", Run: cachedTurnLostLease, Path: PathCachedTurn},
		{Name: "CachedTurnConsumesQueuedResults", Run: cachedTurnConsumesQueued, Path: PathCachedTurn},
		{Name: "CachedTurnIsStaleWhenAQueuedResultIsMissing", Run: cachedTurnQueuedMissing, Path: PathCachedTurn},
		{Name: "NoCachedTurnOfEndedOrUnknownExecutions", Run: noCachedTurnEnded, Path: PathCachedTurn},
		{Name: "CachedTimerTurnConsumesItsTimer", Run: cachedTimerTurnConsumesTimer, Path: PathCachedTurn},
		{Name: "CachedTimerTurnIsStaleWhenAnotherMessageWaits", Run: cachedTimerTurnStale, Path: PathCachedTurn},
		{Name: "CachedTimerTurnIsStaleOnceTheTimerIsTaken", Run: cachedTimerTurnTaken, Path: PathCachedTurn},
		{Name: "CachedFetchDeliversEachTimerOnce", Run: cachedFetchDeliversTimersOnce, Path: PathCachedTurn},
		{Name: "CachedFetchDeliversTimersDueTogetherInOneTurn", Run: cachedFetchTimersDueTogether, Path: PathCachedTurn},
		{Name: "CachedFetchForgetsACancelledTimer", Run: cachedFetchForgetsCancelledTimer, Path: PathCachedTurn},
		{Name: "CachedFetchBuildsATurnForEveryTimerOfAnAck", Run: cachedFetchEveryTimerOfAnAck, Path: PathCachedTurn},
	}
}

// cachedTurnOf returns the cached turn delivering activity 2's completion to
// a (started by startWithActivity), failing when there is none.
func (e *env) cachedTurnOf(instance string) (*provider.OrchestrationItem, provider.WorkItem) {
	e.t.Helper()
	done := *completionItem(instance, 1, 2)
	turn := CachedTurn(e.p, instance, 1, done)
	if turn == nil {
		e.t.Fatalf("no cached turn of %s after this process acked its turns", instance)
	}
	return turn, done
}

// nextStep is the cached turn's ack: the completion recorded, activity 4
// scheduled (event 3).
func nextStep(turn *provider.OrchestrationItem) provider.OrchestrationAck {
	return provider.OrchestrationAck{ExecutionID: turn.ExecutionID,
		HistoryDelta: []provider.Event{event(turn, 1, provider.EventActivityCompleted), event(turn, 2, provider.EventActivityScheduled)},
		WorkerItems:  []provider.WorkItem{activityItem(turn.Instance, turn.ExecutionID, 4)}}
}

// wantUnchanged checks a stale commit wrote nothing: a's history is its
// first turn's, and the activity is still leased under lease (its ack works).
func (e *env) wantUnchanged(lease *provider.WorkItemLease) {
	e.t.Helper()
	e.wantEqual(len(e.history("a")), 1, "a's history")
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 2)), "ack the activity as usual")
}

func cachedTurnCommits(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	turn, done := e.cachedTurnOf("a")
	e.wantEqual(turn.Exists, true, "the turn's instance exists")
	e.wantEqual(turn.Status, provider.StatusRunning, "its status")
	e.wantEqual(turn.OrchestrationName, orchName, "its orchestration")
	e.wantEqual(eventIDs(turn.History), []int64{1}, "its history")
	e.wantEqual(turn.Messages, []provider.WorkItem{done}, "its message")
	leases, err := CommitCachedTurn(e.ctx, e.p, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.must(err, "commit the cached turn")
	e.wantEqual(len(leases), 1, "leases")
	e.wantEqual(leases[0].Item.ID, int64(4), "the leased activity")
	e.wantEqual(leases[0].State, provider.StateRunning, "its execution's state")
	e.wantEqual(eventIDs(e.history("a")), []int64{1, 2, 3}, "a's history")
	e.fetchNone()     // the completion was never queued, and a is not locked
	e.fetchWorkNone() // activity 2 is gone, 4 is leased
	e.must(AckActivity(e.ctx, e.p, leases[0].LockToken, completionItem("a", 1, 4)), "ack activity 4")
	next := e.fetch()
	e.wantEqual(eventIDs(next.History), []int64{1, 2, 3}, "the next turn's history")
}

// The turn starts from the custom status the last turn left.
func cachedTurnCustomStatus(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	ack := firstTurn(item)
	ack.WorkerItems = []provider.WorkItem{activityItem("a", 1, 2)}
	ack.Metadata.CustomStatus = &provider.CustomStatusUpdate{Value: `"step 1"`}
	e.ack(item, ack)
	turn, _ := e.cachedTurnOf("a")
	if turn.CustomStatus == nil || *turn.CustomStatus != `"step 1"` {
		t.Fatalf("the cached turn's custom status is %v, want \"step 1\"", turn.CustomStatus)
	}
}

func cachedTurnStaleMessage(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	turn, _ := e.cachedTurnOf("a")
	e.enqueue(externalItem("a", "x"))
	_, err := CommitCachedTurn(e.ctx, e.p, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.wantErr(err, provider.ErrStale, "commit the cached turn while an event waits")
	e.wantUnchanged(lease)
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkExternalRaised, provider.WorkActivityCompleted},
		"the event and the completion acked as usual, in order")
}

// A turn of the instance fetched meanwhile (its lock held) makes the cached
// turn stale.
func cachedTurnStaleLocked(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	turn, _ := e.cachedTurnOf("a")
	e.enqueue(externalItem("a", "x"))
	held := e.fetch()
	_, err := CommitCachedTurn(e.ctx, e.p, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.wantErr(err, provider.ErrStale, "commit the cached turn while a is locked")
	e.ack(held, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{event(held, 1, provider.EventExternalRaised)}})
	e.wantEqual(len(e.history("a")), 2, "a's history: the locked turn's")
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 2)), "ack the activity as usual")
}

// Another process ran a turn of the instance: this one's cache is behind,
// and its turn would reuse an event ID.
func cachedTurnStalePeer(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	turn, _ := e.cachedTurnOf("a")
	peer := e.peer()
	peer.turn("a", nil)
	_, err := CommitCachedTurn(e.ctx, e.p, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.wantErr(err, provider.ErrStale, "commit the cached turn after a peer's turn")
	e.wantEqual(len(e.history("a")), 2, "a's history: the peer's turn")
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 2)), "ack the activity as usual")
}

// An execution can end without an event (a peer failed it for a message no
// one can decode): its history still ends where the turn was built, but the
// turn must not commit on an ended execution.
func cachedTurnStaleEndedQuietly(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	turn, _ := e.cachedTurnOf("a")
	peer := e.peer()
	peer.enqueue(externalItem("a", "undecodable"))
	held := peer.fetchInstance("a")
	peer.ack(held, provider.OrchestrationAck{ExecutionID: 1,
		Metadata: provider.ExecutionMetadata{Status: provider.StatusFailed, Output: `{"message":"poison"}`}})
	_, err := CommitCachedTurn(e.ctx, e.p, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.wantErr(err, provider.ErrStale, "commit the cached turn of an execution that ended")
	e.wantEqual(e.info("a").Status, provider.StatusFailed, "a's status")
	e.wantUnchanged(lease)
}

func cachedTurnLostLease(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	turn, _ := e.cachedTurnOf("a")
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken, IgnoreAttempt: true}), "hand the activity back")
	_, err := CommitCachedTurn(e.ctx, e.p, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.wantErr(err, provider.ErrLockNotHeld, "commit the cached turn of a lost lease")
	e.wantEqual(len(e.history("a")), 1, "a's history")
	e.fetchNone() // a is not left locked, and nothing was queued
	again := e.fetchWork()
	e.wantEqual(again.Item.ID, int64(2), "activity 2, fetchable again")
}

func noCachedTurnEnded(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	e.finish("a", provider.StatusCompleted, `"done"`)
	if turn := CachedTurn(e.p, "a", 1, *completionItem("a", 1, 2)); turn != nil {
		t.Fatalf("a cached turn of a completed execution: %+v", turn)
	}
	if turn := CachedTurn(e.p, "nobody", 1, *completionItem("nobody", 1, 2)); turn != nil {
		t.Fatalf("a cached turn of an unknown instance: %+v", turn)
	}
	if turn := CachedTurn(e.p, "a", 2, *completionItem("a", 2, 2)); turn != nil {
		t.Fatalf("a cached turn of an execution a never had: %+v", turn)
	}
}

// queueTimer runs a turn of a queuing timer 3, due soon, and waits until it
// is due; it returns the timer.
func (e *env) queueTimer(instance string) provider.WorkItem {
	e.t.Helper()
	due := time.Now().Add(200 * time.Millisecond)
	var timer provider.WorkItem
	e.turn(instance, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		timer = timerItem(instance, item.ExecutionID, 3, due)
		ack.OrchestratorItems = []provider.WorkItem{timer}
	})
	time.Sleep(time.Until(due) + 20*time.Millisecond)
	return timer
}

// firing is a timer turn's ack: TimerFired recorded.
func firing(turn *provider.OrchestrationItem) provider.OrchestrationAck {
	fired := event(turn, 1, provider.EventTimerFired)
	fired.SourceID = 3
	return provider.OrchestrationAck{ExecutionID: turn.ExecutionID, HistoryDelta: []provider.Event{fired}}
}

func cachedTimerTurnConsumesTimer(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	timer := e.queueTimer("a")
	turn := CachedTurn(e.p, "a", 1, timer)
	if turn == nil || !turn.Cached {
		t.Fatalf("the cached turn of a's due timer: %+v, want one marked Cached", turn)
	}
	e.wantEqual(turn.Messages, []provider.WorkItem{timer}, "its message")
	_, err := CommitCachedTurn(e.ctx, e.p, "", turn, firing(turn), nil, longLock)
	e.must(err, "commit the timer's cached turn")
	e.wantEqual(len(e.history("a")), 3, "a's history")
	e.wantEqual(e.depths().Orchestrator, 0, "orchestrator messages left")
	e.fetchNone()
}

func cachedTimerTurnStale(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	timer := e.queueTimer("a")
	turn := CachedTurn(e.p, "a", 1, timer)
	e.enqueue(externalItem("a", "x"))
	_, err := CommitCachedTurn(e.ctx, e.p, "", turn, firing(turn), nil, longLock)
	e.wantErr(err, provider.ErrStale, "commit the timer's cached turn while an event waits")
	e.wantEqual(len(e.history("a")), 2, "a's history")
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkTimerFired, provider.WorkExternalRaised}, "the timer, still queued, and the event")
}

// A fetch took the timer (its turn is locked): the cached turn is stale, and
// the timer is delivered once, by the fetched turn.
func cachedTimerTurnTaken(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	timer := e.queueTimer("a")
	turn := CachedTurn(e.p, "a", 1, timer)
	held := e.fetch()
	_, err := CommitCachedTurn(e.ctx, e.p, "", turn, firing(turn), nil, longLock)
	e.wantErr(err, provider.ErrStale, "commit the timer's cached turn once a fetch took it")
	e.wantEqual(kinds(held.Messages), []provider.WorkItemKind{provider.WorkTimerFired}, "the fetched turn's messages")
	e.ack(held, firing(held))
	e.wantEqual(len(e.history("a")), 3, "a's history")
	e.fetchNone()
}

// A fetch FromCache may return a due timer's turn built from
// the cache (Cached, committed as a TurnCached turn) or locked (acked as
// usual); either way each timer is delivered once, here for instances whose
// timers this process queued and one a peer queued.
func cachedFetchDeliversTimersOnce(t *testing.T, f Factory) {
	e := newEnv(t, f)
	peer := e.peer()
	for _, inst := range []string{"a", "b", "c"} {
		e.create(inst)
	}
	peer.create("p")
	due := time.Now().Add(200 * time.Millisecond)
	for _, queue := range []struct {
		by   *env
		inst string
	}{{e, "a"}, {e, "b"}, {e, "c"}, {peer, "p"}} {
		queue.by.turn(queue.inst, func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
			ack.OrchestratorItems = []provider.WorkItem{timerItem(queue.inst, item.ExecutionID, 3, due)}
		})
	}
	time.Sleep(time.Until(due) + 20*time.Millisecond)
	delivered := map[string]int{}
	deadline := time.Now().Add(10 * time.Second)
	for len(delivered) < 4 && time.Now().Before(deadline) {
		items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 2, LockFor: longLock, PollFor: 200 * time.Millisecond, FromCache: true})
		e.must(err, "fetch, cached")
		for _, item := range items {
			e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkTimerFired}, "messages of "+item.Instance)
			if item.Cached {
				_, err = CommitCachedTurn(e.ctx, e.p, "", item, firing(item), nil, longLock)
				if errors.Is(err, provider.ErrStale) {
					continue // the timer is still queued, or another turn took it
				}
				e.must(err, "commit the cached timer turn of "+item.Instance)
			} else {
				e.ack(item, firing(item))
			}
			delivered[item.Instance]++
		}
	}
	e.wantEqual(delivered, map[string]int{"a": 1, "b": 1, "c": 1, "p": 1}, "timers delivered")
	for _, inst := range []string{"a", "b", "c", "p"} {
		e.wantEqual(len(e.history(inst)), 3, inst+"'s history")
	}
	e.fetchNone()
}

// fanOut runs a's first turn, scheduling activities 2, 3 and 4, leases them
// and acks 3 and 4 (their results queued, as quiet acks leave them); it
// returns activity 2's lease.
func fanOut(e *env) *provider.WorkItemLease {
	e.t.Helper()
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.ack(item, scheduleTurn(item))
	leases := map[int64]*provider.WorkItemLease{}
	for range 3 {
		l := e.fetchWork()
		leases[l.Item.ID] = l
	}
	for _, id := range []int64{3, 4} {
		e.must(AckActivity(e.ctx, e.p, leases[id].LockToken, completionItem("a", 1, id)), "ack activity")
	}
	return leases[2]
}

// gatherAll is the ack of a turn that records the three results.
func gatherAll(turn *provider.OrchestrationItem) provider.OrchestrationAck {
	return provider.OrchestrationAck{ExecutionID: turn.ExecutionID, HistoryDelta: []provider.Event{
		event(turn, 1, provider.EventActivityCompleted), event(turn, 2, provider.EventActivityCompleted),
		event(turn, 3, provider.EventActivityCompleted)}}
}

// A cached turn given results already queued delivers them before the
// activity's own and consumes them with the commit.
func cachedTurnConsumesQueued(t *testing.T, f Factory) {
	e := newEnv(t, f)
	lease := fanOut(e)
	done := *completionItem("a", 1, 2)
	turn := CachedTurn(e.p, "a", 1, done, *completionItem("a", 1, 3), *completionItem("a", 1, 4))
	if turn == nil {
		t.Fatal("no cached turn of a after this process acked its turns")
	}
	e.wantEqual(messageIDs(turn.Messages), []int64{3, 4, 2}, "the turn's messages: the queued results, then the activity's")
	_, err := CommitCachedTurn(e.ctx, e.p, lease.LockToken, turn, gatherAll(turn), nil, longLock)
	e.must(err, "commit the cached turn")
	e.wantEqual(eventIDs(e.history("a")), []int64{1, 2, 3, 4}, "a's history")
	e.fetchNone() // the queued results were consumed, and a is not locked
	e.fetchWorkNone()
}

// A result the turn names but the queue does not hold (never queued, or
// queued with another payload) makes the commit stale: nothing is written,
// the queued results stay for a fetch, the activity stays leased.
func cachedTurnQueuedMissing(t *testing.T, f Factory) {
	e := newEnv(t, f)
	lease := fanOut(e)
	other := *completionItem("a", 1, 4)
	other.Result = `"other"`
	turn := CachedTurn(e.p, "a", 1, *completionItem("a", 1, 2), *completionItem("a", 1, 3), other)
	if turn == nil {
		t.Fatal("no cached turn of a after this process acked its turns")
	}
	_, err := CommitCachedTurn(e.ctx, e.p, lease.LockToken, turn, gatherAll(turn), nil, longLock)
	e.wantErr(err, provider.ErrStale, "commit a cached turn naming a result the queue does not hold")
	e.wantEqual(len(e.history("a")), 1, "a's history")
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 2)), "ack the activity as usual")
	item := e.fetch()
	e.wantEqual(messageIDs(item.Messages), []int64{3, 4, 2}, "the next turn's messages: every result, in order")
}

func messageIDs(items []provider.WorkItem) []int64 {
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}
