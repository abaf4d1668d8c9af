package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// An activity acked quietly (provider.ActivityResult.QuietAfter) is acked and its result
// queued whatever the answer; quiet says only whether the instance was
// still as the caller judged it: unlocked, its history ending at the event
// given, as this process last wrote or read it.
func quietAckCases() []Case {
	return []Case{
		{Name: "QuietAckQueuesTheResult", Run: quietAckQueues, Path: PathQuiet},
		{Name: "QuietAckIsNotQuietWhenTheHistoryMoved", Run: quietAckHistoryMoved, Path: PathQuiet},
		{Name: "QuietAckIsNotQuietAfterAPeersTurn", Run: quietAckPeer, Path: PathQuiet},
		{Name: "QuietAckIsNotQuietWhenLocked", Run: quietAckLocked, Path: PathQuiet},
		{Name: "QuietAckOfALostLeaseQueuesNothing", Run: quietAckLostLease, Path: PathQuiet},
	}
}

// ackQuietly acks activity 2 of a (started by startWithActivity), judged
// from a history ending at lastEvent.
func (e *env) ackQuietly(lease *provider.WorkItemLease, lastEvent int64) bool {
	e.t.Helper()
	quiet, err := AckActivityQuietly(e.ctx, e.p, lease.LockToken, *completionItem("a", 1, 2), lastEvent)
	e.must(err, "ack the activity quietly")
	return quiet
}

// wantResultQueued checks the next turn of a delivers activity 2's result
// after a's first turn.
func (e *env) wantResultQueued() {
	e.t.Helper()
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkActivityCompleted}, "the next turn's messages")
	e.wantEqual(eventIDs(item.History), []int64{1}, "its history")
	e.fetchWorkNone()
}

func quietAckQueues(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	e.wantEqual(e.ackQuietly(lease, 1), true, "quiet: a is unlocked and its history ends at event 1")
	e.wantResultQueued()
}

func quietAckHistoryMoved(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	e.wantEqual(e.ackQuietly(lease, 5), false, "quiet, judged from a history a never had")
	e.wantResultQueued()
}

func quietAckPeer(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	e.peer().turn("a", nil)
	e.wantEqual(e.ackQuietly(lease, 1), false, "quiet after a peer's turn this process did not see")
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkActivityCompleted}, "the next turn's messages")
	e.wantEqual(eventIDs(item.History), []int64{1, 2}, "its history: the peer's turn too")
}

func quietAckLocked(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	e.enqueue(externalItem("a", "x"))
	held := e.fetch()
	e.wantEqual(e.ackQuietly(lease, 1), false, "quiet while a turn of a holds its lock")
	e.ack(held, provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{event(held, 1, provider.EventExternalRaised)}})
	item := e.fetch()
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkActivityCompleted}, "the turn after the held one delivers the result")
}

func quietAckLostLease(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken, IgnoreAttempt: true}), "hand the activity back")
	_, err := AckActivityQuietly(e.ctx, e.p, lease.LockToken, *completionItem("a", 1, 2), 1)
	e.wantErr(err, provider.ErrLockNotHeld, "ack a lost lease quietly")
	e.fetchNone() // nothing queued
	again := e.fetchWork()
	e.wantEqual(again.Item.ID, int64(2), "activity 2, fetchable again")
}
