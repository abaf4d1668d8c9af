package provider

import "time"

// CommitRequest is what one Commit writes. The combinations a store
// accepts, and what each is:
//
//   - Turn (TurnLocked): a fetched turn's commit. With LockNextFor, the
//     instance's next turn comes back in Committed.Next (ack and fetch next).
//   - Turn (TurnNew): the first turn of an instance that does not exist,
//     computed from its start message by the starting process (direct
//     start). Committed.Created says whether it was committed.
//   - Activity and Turn (TurnCached): an activity's result and the turn it
//     brings on, built from the history cache (FetchRequest.Deliver).
//   - Turn (TurnCached) alone: the turn of timers a fetch FromCache built.
//   - Activity alone: an activity's result (or, with Result nil, its
//     removal). With QuietAfter, a quiet ack; with LockNextFor, its
//     instance's turn comes back in Committed.Next.
//
// Anything else gets ErrInvalidArgument.
type CommitRequest struct {
	// Activity is the leased activity this commit completes.
	Activity *ActivityResult
	// Turn is the orchestration turn this commit records.
	Turn *TurnCommit
	// LockNextFor > 0 locks, in the same transaction, the turn the commit
	// leads to, for LockNextFor, and returns it in Committed.Next:
	//   - after a TurnLocked turn, the instance's messages that became
	//     visible while the turn ran (an activity's result, an event, its own
	//     continue-as-new); Next is nil when there are none;
	//   - after an Activity alone, its instance's turn when no live lock
	//     holds the instance and its messages are ready; Next is nil
	//     otherwise, and the result is queued as without LockNextFor.
	// A store may decline (Next nil) and a caller then lets a fetch take the
	// turn.
	LockNextFor time.Duration
}

// ActivityResult completes a leased activity.
type ActivityResult struct {
	// LockToken is the activity's lease.
	LockToken string
	// Result is the completion queued to the activity's orchestration (nil:
	// the item is only removed). With a TurnCached turn it is the turn's
	// last message and is not queued: the turn consumes it.
	Result *WorkItem
	// QuietAfter > 0 asks for a quiet ack: when, in the same transaction,
	// the result's execution is found unlocked and its history still ends
	// at event QuietAfter (the turn the caller judged from is still the
	// last), no dispatcher is woken for the result and Committed.Quiet is
	// true; it waits in the queue for the turn a later message brings on.
	// Otherwise the commit wakes dispatchers as usual. A store may always
	// decline (Quiet false). It needs Result and no Turn or LockNextFor.
	QuietAfter int64
}

// TurnHold says how a committed turn's instance is held.
type TurnHold int

const (
	// TurnLocked: a fetch locked the instance; TurnCommit.LockToken is the
	// lock.
	TurnLocked TurnHold = iota + 1
	// TurnNew: no one holds the instance; it must not exist, be locked or
	// have messages queued. TurnCommit.Instance names it, and the ack is its
	// first turn (execution 1, naming the orchestration). A store without
	// direct starts answers ErrUnsupported.
	TurnNew
	// TurnCached: a turn built from the history cache (TurnCommit.Cached),
	// not locked. It commits only when no live lock holds the instance,
	// every message it consumes is still queued and visible (or is the
	// Activity's result), its history is still the one it was built from
	// (same life, execution and last event), and no other message of it is
	// visible; otherwise Commit writes nothing and returns ErrStale, and the
	// caller acks the activity alone (or fetches the timers' instance).
	TurnCached
)

// TurnCommit is a turn's ack and how its instance is held.
type TurnCommit struct {
	Hold TurnHold
	// LockToken is the instance lock of a TurnLocked turn.
	LockToken string
	// Instance is the turn's instance: required for TurnNew, and with
	// LockNextFor (it must be the instance LockToken holds).
	Instance string
	// Cached is the turn a TurnCached commit delivers, as the fetch
	// returned it.
	Cached *OrchestrationItem
	// Ack is what the turn writes: it creates the instance (first turn) and
	// the execution, appends the history delta, applies the metadata
	// (status, output, custom status), enqueues worker and orchestrator
	// items (TimerFired items become visible at FireAt), removes cancelled
	// activities from the worker queue, deletes exactly the messages the
	// turn consumed and releases the lock.
	Ack OrchestrationAck
	// Lease lists positions in Ack.WorkerItems to lease to the caller for
	// LeaseFor, as FetchWorkItem would (an attempt counted, the execution's
	// state reported), in the transaction that inserts them (eager
	// dispatch): the caller runs them without a fetch, and no other worker
	// is woken for them. Their leases come back in Committed.Leases, in the
	// order of Lease.
	Lease    []int
	LeaseFor time.Duration
}

// Committed is what a Commit returns beyond success.
type Committed struct {
	// Leases are the leased activities (TurnCommit.Lease).
	Leases []*WorkItemLease
	// Next is the turn LockNextFor locked, or nil.
	Next *OrchestrationItem
	// Quiet reports a quiet ack (ActivityResult.QuietAfter).
	Quiet bool
	// Created reports a TurnNew turn committed; false, with no error, when
	// the instance exists, is locked or has messages queued: nothing
	// changed, and the caller queues the start instead. A TurnNew commit and
	// StartInstance never both find the ID free.
	Created bool
}
