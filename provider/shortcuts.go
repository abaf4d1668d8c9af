package provider

import (
	"context"
	"time"
)

// ActivityLeaser is implemented by providers that can hand a turn's new
// activities straight to the process that commits the turn (eager dispatch):
// the worker items are inserted already leased, so that process runs them
// without a fetch, and no other worker is woken for them.
type ActivityLeaser interface {
	// AckOrchestrationItemLeasing is AckOrchestrationItem that, in the same
	// transaction, leases the ack's WorkerItems at the positions in lease to
	// the caller for lockTimeout, as FetchWorkItem would (an attempt counted,
	// the execution's state reported). It returns their leases in the order
	// of lease. On error nothing is committed and nothing is leased.
	AckOrchestrationItemLeasing(ctx context.Context, lockToken string, ack OrchestrationAck, lease []int, lockTimeout time.Duration) ([]*WorkItemLease, error)
}

// QuietAcker is implemented by providers that can ack an activity whose
// result its orchestration has, for now, nothing to do with (the code waits
// for other results too) without waking a dispatcher: the result waits in
// the queue for the turn a later message brings on.
type QuietAcker interface {
	// AckWorkItemQuietly is AckWorkItem with a completion. When, in the same
	// transaction, the completion's execution is found unlocked and its
	// history still ends at event lastEvent (the turn the caller's judgement
	// comes from is still the last), nothing is woken and quiet is true.
	// Otherwise the ack wakes dispatchers as AckWorkItem does. (The runtime
	// sends the ack that brings on the instance's turn only once its quiet
	// acks returned, so that turn finds their results queued.)
	AckWorkItemQuietly(ctx context.Context, lockToken string, completion WorkItem, lastEvent int64) (quiet bool, err error)
}

// ActivityContinuer is implemented by providers that let an activity's
// completion run its orchestration's next turn in the same process: the
// activity's ack locks the instance when no one holds it and returns the
// turn, saving the orchestration fetch and the wake-up of other dispatchers.
type ActivityContinuer interface {
	// AckWorkItemContinuing is AckWorkItem with a completion that, in the same
	// transaction, locks the completion's instance for lockTimeout when no
	// live lock holds it and returns its turn as a fetch by name does. The
	// item is nil when the instance is locked elsewhere or its messages are
	// not ready; the completion is then queued as AckWorkItem queues it.
	AckWorkItemContinuing(ctx context.Context, lockToken string, completion WorkItem, lockTimeout time.Duration) (*OrchestrationItem, error)
}

// EagerStarter is implemented by providers that let the process starting an
// instance run its first turn (eager start): the start is queued and the
// instance locked for the caller in one transaction, saving the
// orchestration fetch and the wake-up of other dispatchers.
type EagerStarter interface {
	// StartInstanceFetching is StartInstance without events that, in the
	// same transaction, locks the instance for lockTimeout when no live lock
	// holds it and returns its turn as a fetch by name does. The turn is
	// nil when the instance is locked elsewhere or its messages are not
	// ready: what was queued then waits for any dispatcher, and they are
	// woken. On error nothing is queued and nothing locked.
	StartInstanceFetching(ctx context.Context, start WorkItem, reuse IDReusePolicy, lockTimeout time.Duration) (*OrchestrationItem, error)
}

// FirstTurnCommitter is implemented by providers that let the process
// starting an instance commit the instance's first turn as its start (direct
// start): no start message is queued and nothing is fetched; the instance,
// its history and the turn's messages appear in one commit.
type FirstTurnCommitter interface {
	// CommitFirstTurn commits ack, the first turn computed from a start
	// message for instance, in one transaction, when the instance does not
	// exist, no live lock holds it and no message of any kind is queued for
	// it: as AckOrchestrationItem would commit the turn of that message,
	// with the worker items at the positions in lease inserted leased to the
	// caller for lockTimeout as AckOrchestrationItemLeasing does. Otherwise
	// nothing changes and created is false: the caller queues the start
	// instead. ack is for execution 1 and names the orchestration in its
	// metadata. On error nothing is committed. It and StartInstance never
	// both find the ID free: a start that races a direct start of the same
	// ID sees the instance, or is seen here.
	CommitFirstTurn(ctx context.Context, instance string, ack OrchestrationAck, lease []int, lockTimeout time.Duration) (created bool, leases []*WorkItemLease, err error)
}

// TurnContinuer is implemented by providers whose turn ack can hand the
// instance's next turn straight back (ack-and-fetch-next): messages that
// reached the instance while its turn ran (an activity's completion, an
// event, a child's result, its own continue-as-new) are locked for the
// caller in the commit, saving a fetch and the wake-up of other dispatchers.
type TurnContinuer interface {
	// AckOrchestrationItemContinuing is AckOrchestrationItemLeasing (lease
	// and activityLockTimeout as there) that, in the same transaction, after
	// the ack, locks instance, the instance lockToken holds, again for
	// lockTimeout under a new token when a message of it is visible, and
	// returns that turn as a fetch by name does. next is nil when no
	// message of the instance is visible. On error nothing is committed,
	// leased or locked.
	AckOrchestrationItemContinuing(ctx context.Context, instance, lockToken string, ack OrchestrationAck, lease []int,
		activityLockTimeout, lockTimeout time.Duration) (leases []*WorkItemLease, next *OrchestrationItem, err error)
}

// CachedTurnCommitter is implemented by providers that keep recent histories
// in the process (a history cache). An activity's completion then runs its
// orchestration's next turn from the cached history, with no lock taken
// first, and the activity's ack and the turn commit in one transaction when
// nothing changed the instance meanwhile: one commit per activity of a
// sequence instead of two (ack and lock, then the turn).
type CachedTurnCommitter interface {
	// CachedTurn returns the turn that would deliver msg, a completion for
	// execution of instance, built from the history this process holds: all
	// of it when the execution is still running, msg its last message,
	// AttemptCount 1. It is not locked; its LockToken is only for
	// CommitCachedTurn. nil when no such history is held. msg is an
	// activity's result, never queued, or a timer queued for the instance
	// (as msg, byte for byte once stored): that turn is Cached and consumes
	// the queued timer. queued (an activity's turn only) are results of the
	// execution this process's quiet acks queued (QuietAcker): the turn
	// delivers them before msg and consumes them.
	CachedTurn(instance string, execution int64, msg WorkItem, queued ...WorkItem) *OrchestrationItem
	// CommitCachedTurn acks the activity leased under workToken, whose
	// completion is turn's last message, without queuing the completion, and
	// deletes the queued results turn delivers before it (or, with an empty
	// workToken, deletes turn's messages, the timers that turn was fetched
	// for by a fetch FromCache), and commits ack, turn's ack, with the
	// worker items at the positions in lease leased to the caller for
	// activityLockTimeout as AckOrchestrationItemLeasing does, in one
	// transaction, when no live lock holds the instance, every message turn
	// consumes is still queued and visible, its history is still the one turn
	// was built from (same life, execution and last event), and no other
	// message of it is visible. Otherwise it writes nothing and returns
	// ErrStale: the caller acks the activity as usual (or fetches the timer's
	// instance). ErrLockNotHeld when the activity's lease is lost. On error
	// nothing is committed.
	CommitCachedTurn(ctx context.Context, workToken string, turn *OrchestrationItem, ack OrchestrationAck, lease []int,
		activityLockTimeout time.Duration) ([]*WorkItemLease, error)
}
