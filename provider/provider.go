package provider

import (
	"context"
	"time"
)

// Provider is the storage contract the runtime's dispatchers and client use.
// Implementations are safe for concurrent use by many goroutines and by many
// processes sharing one store. Every method but Watch and Close takes one
// request struct: what a call carries is named, and a new option is a new
// field, not a new method.
//
// A store implements all of it. The fast paths are fields of a request
// (CommitRequest.LockNextFor, TurnCommit.Lease, ActivityResult.QuietAfter,
// StartRequest.LockFor, FetchRequest.FromCache) and each has an answer that
// declines it, which a store without the technique gives: see each field.
type Provider interface {
	Admin
	Workers
	Sessions
	TxStarter

	// Fetch locks the turns of up to req.Max instances that have visible
	// messages and no live lock (or of the one instance req.Instance names),
	// tags those messages with a new lock token per instance, counts an
	// attempt on them, and returns them with each current execution's
	// history. Messages that become visible later are not part of an item
	// and wait for the next turn. With nothing ready it waits up to
	// req.PollFor, then returns an empty slice; a named fetch never waits and
	// returns none when a live lock holds the instance or it has no visible
	// message. A stored row that cannot be decoded does not fail the fetch:
	// the item comes back locked with DecodeError set, so its attempts count
	// toward the poison limit. For FromCache and Deliver, turns built from a
	// history cache, see FetchRequest. An invalid request (Max < 1,
	// LockFor ≤ 0, PollFor < 0, Deliver without FromCache and Instance) gets
	// ErrInvalidArgument.
	Fetch(ctx context.Context, req FetchRequest) ([]*OrchestrationItem, error)

	// Commit writes what req carries in one transaction: an activity's
	// result, a turn, or both (see CommitRequest for the combinations). All
	// of it happens or none of it does. A stale, expired or unknown lock
	// token gets ErrLockNotHeld; a history event ID the execution already
	// has gets ErrDuplicateEvent; a cached turn whose instance changed
	// since it was built gets ErrStale; none of them changes anything. A
	// combination CommitRequest does not list gets ErrInvalidArgument.
	Commit(ctx context.Context, req CommitRequest) (Committed, error)

	// AbandonOrchestrationItem releases a turn's lock without committing.
	// The fetched messages stay queued. With req.Delay > 0 the instance
	// stays unfetchable for Delay (backoff); with IgnoreAttempt the fetch's
	// attempt is not counted. A non-nil Cause (why the turn was handed back:
	// nondeterministic code, an unregistered name, a store error) is kept as
	// the instance's LastError until a turn of it is committed; with Delay 0
	// it may be dropped at once. A stale, expired or unknown token gets
	// ErrLockNotHeld and changes nothing.
	AbandonOrchestrationItem(ctx context.Context, req AbandonRequest) error

	// RenewOrchestrationItemLock extends a live turn lock to now+req.ExtendFor.
	// A stale, expired or unknown token gets ErrLockNotHeld.
	RenewOrchestrationItemLock(ctx context.Context, req RenewRequest) error

	// FetchWorkItem locks the oldest visible, unlocked worker-queue item
	// whose tag req.Tags takes for req.LockFor, waiting up to req.PollFor
	// for one, and counts an attempt on it; items the filter skips are not
	// locked. An invalid tag in req.Tags gets ErrInvalidArgument. The lease reports the state of the execution the activity
	// belongs to, so a worker can skip or cancel activities nobody waits for.
	// nil when none is ready.
	FetchWorkItem(ctx context.Context, req FetchWorkRequest) (*WorkItemLease, error)

	// AbandonWorkItem unlocks an activity's item, visible again after
	// req.Delay. With IgnoreAttempt the fetch's attempt is not counted
	// (Cause is not used). A stale, expired or unknown token gets
	// ErrLockNotHeld and changes nothing.
	AbandonWorkItem(ctx context.Context, req AbandonRequest) error

	// RenewWorkItemLock extends a live activity lease to now+req.ExtendFor
	// and reports the state of the activity's execution. A stale, expired or
	// unknown token, or an item removed by cancellation, gets ErrLockNotHeld.
	RenewWorkItemLock(ctx context.Context, req RenewRequest) (ExecutionState, error)

	// StartInstance queues req.Start, a StartOrchestration for a new
	// instance, and after it req.Events (ExternalRaised messages for that
	// instance, which its first turn receives), when the store lets the
	// instance start under req.Reuse, decided in the same transaction, which
	// no other start of the ID interleaves with:
	//   - no instance has the ID and no start of it is queued: all is queued;
	//   - Start.Owner is set and equals the owner the instance's current
	//     execution, or its queued start, recorded: it is a retry of that
	//     start; nothing is queued and the result is nil, whatever Reuse says;
	//   - Reuse allows replacing what holds the ID (see IDReusePolicy) and it
	//     is a root instance or a queued start: it is deleted, as
	//     DeleteInstances deletes (forced for IDReuseTerminateRunning), and
	//     all is queued;
	//   - otherwise nothing changes and the error is an *AlreadyExistsError
	//     (errors.Is ErrAlreadyExists) saying what holds the ID.
	// A sub-orchestration is never replaced: its parent waits for it.
	//
	// With req.LockFor > 0 (eager start: the starting process runs the
	// first turn) the same transaction locks the instance for LockFor when
	// no live lock holds it and returns its turn as a fetch by name does.
	// The turn is nil when the instance is locked elsewhere or its messages
	// are not ready, or the store declines: what was queued then waits for
	// any dispatcher. LockFor with Events gets ErrInvalidArgument.
	StartInstance(ctx context.Context, req StartRequest) (*OrchestrationItem, error)

	// SendToInstance adds a client's message (an external event, a cancel or
	// a terminate request) to the orchestrator queue of item.Instance if the
	// instance can still receive it, checked in the same transaction: its
	// current execution is running, or continued as new (the next execution
	// reads it), or a StartOrchestration for it is queued. Otherwise nothing
	// is queued and the error wraps ErrNotFound (no such instance, none being
	// started) or ErrInstanceFinished (the current execution has ended). A
	// message that races with the instance's last turn may still be accepted
	// and then not consumed; it stays in no history.
	SendToInstance(ctx context.Context, item WorkItem) error

	// ReadHistory returns the history of req.Instance's execution
	// req.ExecutionID (0: the current one) in event ID order; an unknown
	// instance or execution has an empty history.
	ReadHistory(ctx context.Context, req ExecutionRequest) ([]Event, error)

	// GetCustomStatus returns the instance's custom status. changed is false,
	// and the value is not loaded, when its version is still
	// req.KnownVersion: pollers pay for data only when something changed. An
	// unknown instance gets ErrNotFound.
	GetCustomStatus(ctx context.Context, req CustomStatusRequest) (status CustomStatus, changed bool, err error)

	// ReadValues returns the instance's durable values (all of them, or
	// those of req.Keys it holds) as its last committed turn left them,
	// each a JSON document by key. An unknown instance gets ErrNotFound.
	ReadValues(ctx context.Context, req ValuesRequest) (map[string]string, error)

	// Watch reports instance status and custom status changes recorded after the
	// call, by this process or any other sharing the store, until ctx ends; then
	// the channel is closed. Changes to one instance may be coalesced into one
	// report of its latest state; none is lost.
	Watch(ctx context.Context) (<-chan StatusChange, error)

	// Close releases the provider's resources.
	Close() error
}

// FetchRequest says which instances' turns a Fetch locks, and for how long.
type FetchRequest struct {
	// Max is how many instances' turns to lock at most: at least 1.
	Max int
	// LockFor is the instance locks' lease: a turn not committed, renewed or
	// abandoned by then may be taken over by another fetch.
	LockFor time.Duration
	// PollFor is how long to wait for ready work when there is none (0:
	// answer at once).
	PollFor time.Duration
	// Instance names the one instance to lock (a process that must run a
	// turn no worker will run, see runtime.Client.TerminateNow); "" takes any
	// ready ones.
	Instance string
	// FromCache lets a store that caches histories answer, for timers its
	// own commits queued that fell due, with turns built from the cache:
	// Cached set, not locked, one per instance, its messages every timer of
	// it that fell due (a turn for one would find the others visible, and be
	// stale). Such a turn commits as a TurnCached TurnCommit with no
	// Activity; when that is stale, the timers are still queued, for a named
	// fetch or any other. A store without a cache ignores it.
	FromCache bool
	// Capability, when not nil, leaves out the instances whose
	// orchestration and pinned version (recorded by the first turn of their
	// current execution) it does not admit, without locking them, so two
	// builds of the code on one store never run each other's instances. An
	// instance whose start is still queued has no pinned version and is
	// always admitted. A named fetch and cached turns (FromCache) ignore it.
	Capability *Capability
	// Deliver, with FromCache and Instance, asks the cache alone (the store
	// is not read and nothing is locked) for the turn of Instance that
	// delivers these messages in order, for execution
	// Deliver[len-1].ExecutionID: the last is an activity's result (never
	// queued) or a timer queued for the instance (as stored, which the turn
	// consumes); those before an activity's result are results of that
	// execution this process's quiet commits queued
	// (ActivityResult.QuietAfter), which the turn consumes. The turn holds
	// the whole history when the execution still runs, AttemptCount 1, and
	// Cached set; it commits as a TurnCached TurnCommit, with the
	// activity's ActivityResult when it delivers one. None when the store
	// holds no such history (a store without a cache never does).
	Deliver []WorkItem
}

// FetchOne fetches at most one turn (nil when none is ready): Fetch for a
// caller that runs one turn at a time, such as a tool or a test.
func FetchOne(ctx context.Context, p Provider, req FetchRequest) (*OrchestrationItem, error) {
	req.Max = 1
	items, err := p.Fetch(ctx, req)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	return items[0], nil
}

// FetchWorkRequest says how long a fetched activity's lease lasts and how
// long to wait for one.
type FetchWorkRequest struct {
	// LockFor is the lease: an item not acked, renewed or abandoned by then
	// may be fetched again.
	LockFor time.Duration
	// PollFor is how long to wait for ready work when there is none (0:
	// answer at once).
	PollFor time.Duration
	// Tags says which activities to take by their tag; the zero value takes
	// untagged ones.
	Tags TagFilter
	// Sessions, when not nil, lets the fetch take session items as
	// provider.Sessions describes; nil: only items without a session.
	Sessions *SessionConfig
}

// AbandonRequest hands back a locked turn or activity without committing it.
type AbandonRequest struct {
	LockToken string
	// Delay keeps the work unfetchable this long (backoff); 0: at once.
	Delay time.Duration
	// IgnoreAttempt does not count the fetch's attempt toward the poison
	// limit (the work was handed back for reasons of the process, such as
	// shutdown).
	IgnoreAttempt bool
	// Cause, for a turn, says why it was handed back; see
	// Provider.AbandonOrchestrationItem.
	Cause *ErrorDetails
}

// RenewRequest extends a live lock.
type RenewRequest struct {
	LockToken string
	// ExtendFor is the lock's new lease, counted from now.
	ExtendFor time.Duration
}

// StartRequest starts an instance; see Provider.StartInstance.
type StartRequest struct {
	// Start is the StartOrchestration message of the new instance.
	Start WorkItem
	// Events are ExternalRaised messages the first turn receives.
	Events []WorkItem
	// Reuse says what to do when the instance ID is taken.
	Reuse IDReusePolicy
	// LockFor > 0 locks the new instance's first turn for the caller (eager
	// start).
	LockFor time.Duration
}

// CustomStatusRequest asks for an instance's custom status unless its
// version is still KnownVersion.
type CustomStatusRequest struct {
	Instance     string
	KnownVersion int64
}
