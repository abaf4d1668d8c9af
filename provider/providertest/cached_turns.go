package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// A turn built from the history a provider caches (provider.CachedTurnCommitter)
// commits with its activity's ack only while nothing else changed the
// instance; otherwise nothing is written and the activity is still leased.
func cachedTurnCases() []Case {
	return []Case{
		{"CachedTurnCommitsWithItsActivity", cachedTurnCommits},
		{"CachedTurnCarriesTheCustomStatus", cachedTurnCustomStatus},
		{"CachedTurnIsStaleWhenAMessageWaits", cachedTurnStaleMessage},
		{"CachedTurnIsStaleWhenLocked", cachedTurnStaleLocked},
		{"CachedTurnIsStaleAfterAPeersTurn", cachedTurnStalePeer},
		{"CachedTurnWithLostLeaseCommitsNothing", cachedTurnLostLease},
		{"NoCachedTurnOfEndedOrUnknownExecutions", noCachedTurnEnded},
	}
}

func cacher(e *env) provider.CachedTurnCommitter { return capability[provider.CachedTurnCommitter](e) }

// cachedTurnOf returns the cached turn delivering activity 2's completion to
// a (started by startWithActivity), failing when there is none.
func (e *env) cachedTurnOf(instance string) (*provider.OrchestrationItem, provider.WorkItem) {
	e.t.Helper()
	done := *completionItem(instance, 1, 2)
	turn := cacher(e).CachedTurn(instance, 1, done)
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
	e.must(e.p.AckWorkItem(e.ctx, lease.LockToken, completionItem("a", 1, 2)), "ack the activity as usual")
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
	leases, err := cacher(e).CommitCachedTurn(e.ctx, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.must(err, "commit the cached turn")
	e.wantEqual(len(leases), 1, "leases")
	e.wantEqual(leases[0].Item.ID, int64(4), "the leased activity")
	e.wantEqual(leases[0].State, provider.StateRunning, "its execution's state")
	e.wantEqual(eventIDs(e.history("a")), []int64{1, 2, 3}, "a's history")
	e.fetchNone()     // the completion was never queued, and a is not locked
	e.fetchWorkNone() // activity 2 is gone, 4 is leased
	e.must(e.p.AckWorkItem(e.ctx, leases[0].LockToken, completionItem("a", 1, 4)), "ack activity 4")
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
	_, err := cacher(e).CommitCachedTurn(e.ctx, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
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
	_, err := cacher(e).CommitCachedTurn(e.ctx, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.wantErr(err, provider.ErrStale, "commit the cached turn while a is locked")
	e.ack(held, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{event(held, 1, provider.EventExternalRaised)}})
	e.wantEqual(len(e.history("a")), 2, "a's history: the locked turn's")
	e.must(e.p.AckWorkItem(e.ctx, lease.LockToken, completionItem("a", 1, 2)), "ack the activity as usual")
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
	_, err := cacher(e).CommitCachedTurn(e.ctx, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
	e.wantErr(err, provider.ErrStale, "commit the cached turn after a peer's turn")
	e.wantEqual(len(e.history("a")), 2, "a's history: the peer's turn")
	e.must(e.p.AckWorkItem(e.ctx, lease.LockToken, completionItem("a", 1, 2)), "ack the activity as usual")
}

func cachedTurnLostLease(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	turn, _ := e.cachedTurnOf("a")
	e.must(e.p.AbandonWorkItem(e.ctx, lease.LockToken, 0, true), "hand the activity back")
	_, err := cacher(e).CommitCachedTurn(e.ctx, lease.LockToken, turn, nextStep(turn), []int{0}, longLock)
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
	if turn := cacher(e).CachedTurn("a", 1, *completionItem("a", 1, 2)); turn != nil {
		t.Fatalf("a cached turn of a completed execution: %+v", turn)
	}
	if turn := cacher(e).CachedTurn("nobody", 1, *completionItem("nobody", 1, 2)); turn != nil {
		t.Fatalf("a cached turn of an unknown instance: %+v", turn)
	}
	if turn := cacher(e).CachedTurn("a", 2, *completionItem("a", 2, 2)); turn != nil {
		t.Fatalf("a cached turn of an execution a never had: %+v", turn)
	}
}
