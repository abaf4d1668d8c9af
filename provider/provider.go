package provider

import (
	"context"
	"time"
)

// Provider is the storage contract the runtime's dispatchers and client use.
// Implementations are safe for concurrent use by many goroutines and by many
// processes sharing one store.
//
// Polling: every fetch takes a lockTimeout, how long the returned lock lasts
// unless renewed, and a pollTimeout. With pollTimeout zero a fetch returns at
// once; otherwise it waits up to pollTimeout for work, returning early as soon as
// work is available. A fetch that finds nothing returns nil and no error.
type Provider interface {
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
	// toward the poison limit. With req.FromCache, a store that caches
	// histories may also return turns built from its cache for timers its own
	// acks queued that fell due (OrchestrationItem.Cached; see
	// CachedTurnCommitter); a store without a cache ignores it. An invalid
	// request (Max < 1, LockFor ≤ 0, PollFor < 0) gets ErrInvalidArgument.
	Fetch(ctx context.Context, req FetchRequest) ([]*OrchestrationItem, error)

	// AckOrchestrationItem commits a turn atomically: it creates the instance
	// (first turn) and the execution, appends the history delta, applies the
	// metadata (status, output, custom status), enqueues worker and orchestrator
	// items (TimerFired items become visible at FireAt), removes cancelled
	// activities from the worker queue, deletes exactly the messages fetched under
	// lockToken and releases the lock. All of it happens or none of it does.
	// A stale, expired or unknown token gets ErrLockNotHeld; a history event ID
	// the execution already has gets ErrDuplicateEvent; neither changes anything.
	AckOrchestrationItem(ctx context.Context, lockToken string, ack OrchestrationAck) error

	// AbandonOrchestrationItem releases the lock without committing. The fetched
	// messages stay queued. With delay > 0 the instance stays unfetchable for
	// delay (backoff); with ignoreAttempt the fetch's attempt is not counted.
	// A non-nil cause (why the turn was handed back: nondeterministic code, an
	// unregistered name, a store error) is kept as the instance's LastError
	// until a turn of it is acked; with delay 0 it may be dropped at once.
	// A stale, expired or unknown token gets ErrLockNotHeld and changes nothing.
	AbandonOrchestrationItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool, cause *ErrorDetails) error

	// RenewOrchestrationItemLock extends a live lock to now+extendFor.
	// A stale, expired or unknown token gets ErrLockNotHeld.
	RenewOrchestrationItemLock(ctx context.Context, lockToken string, extendFor time.Duration) error

	// FetchWorkItem locks the oldest visible, unlocked worker-queue item and counts
	// an attempt on it. The lease reports the state of the execution the activity
	// belongs to, so a worker can skip or cancel activities nobody waits for.
	FetchWorkItem(ctx context.Context, lockTimeout, pollTimeout time.Duration) (*WorkItemLease, error)

	// AckWorkItem deletes the locked item and, when completion is not nil, enqueues
	// it to the orchestrator queue, atomically. A stale, expired or unknown token
	// (including an item removed by cancellation) gets ErrLockNotHeld and enqueues nothing.
	AckWorkItem(ctx context.Context, lockToken string, completion *WorkItem) error

	// AbandonWorkItem unlocks the item, visible again after delay. With
	// ignoreAttempt the fetch's attempt is not counted. A stale, expired or
	// unknown token gets ErrLockNotHeld and changes nothing.
	AbandonWorkItem(ctx context.Context, lockToken string, delay time.Duration, ignoreAttempt bool) error

	// RenewWorkItemLock extends a live lock to now+extendFor and reports the state
	// of the activity's execution. A stale, expired or unknown token, or an item
	// removed by cancellation, gets ErrLockNotHeld.
	RenewWorkItemLock(ctx context.Context, lockToken string, extendFor time.Duration) (ExecutionState, error)

	// EnqueueForOrchestrator adds a message to the orchestrator queue of
	// item.Instance, visible after delay. It never creates the instance row and
	// never waits for the instance's lock.
	EnqueueForOrchestrator(ctx context.Context, item WorkItem, delay time.Duration) error

	// StartInstance queues start, a StartOrchestration for a new instance,
	// and after it events (ExternalRaised messages for that instance, which
	// its first turn receives), when the store lets the instance start under
	// reuse, decided in the same transaction, which no other start of the ID
	// interleaves with:
	//   - no instance has the ID and no start of it is queued: all is queued;
	//   - start.Owner is set and equals the owner the instance's current
	//     execution, or its queued start, recorded: it is a retry of that
	//     start; nothing is queued and the result is nil, whatever reuse says;
	//   - reuse allows replacing what holds the ID (see IDReusePolicy) and it
	//     is a root instance or a queued start: it is deleted, as
	//     DeleteInstance deletes (forced for IDReuseTerminateRunning), and all
	//     is queued;
	//   - otherwise nothing changes and the error is an *AlreadyExistsError
	//     (errors.Is ErrAlreadyExists) saying what holds the ID.
	// A sub-orchestration is never replaced: its parent waits for it.
	StartInstance(ctx context.Context, start WorkItem, events []WorkItem, reuse IDReusePolicy) error

	// SendToInstance adds a client's message (an external event, a cancel or a
	// terminate request) to the orchestrator queue of item.Instance if the
	// instance can still receive it, checked in the same transaction: its
	// current execution is running, or continued as new (the next execution
	// reads it), or a StartOrchestration for it is queued.
	// Otherwise nothing is queued and the error wraps ErrNotFound (no such
	// instance, none being started) or ErrInstanceFinished (the current
	// execution has ended). A message that races with the instance's last turn
	// may still be accepted and then not consumed; it stays in no history.
	SendToInstance(ctx context.Context, item WorkItem) error

	// EnqueueForWorker adds an ActivityExecute item to the worker queue, visible after delay.
	EnqueueForWorker(ctx context.Context, item WorkItem, delay time.Duration) error

	// ReadHistory returns the current execution's history in event ID order; an
	// unknown instance has an empty history.
	ReadHistory(ctx context.Context, instance string) ([]Event, error)

	// ReadHistoryExecution returns the history of one execution in event ID order.
	ReadHistoryExecution(ctx context.Context, instance string, executionID int64) ([]Event, error)

	// AppendHistory appends events to an existing execution outside a turn
	// (tools and repairs). Duplicate IDs get ErrDuplicateEvent and append nothing.
	AppendHistory(ctx context.Context, instance string, executionID int64, events []Event) error

	// GetCustomStatus returns the instance's custom status. changed is false, and
	// the value is not loaded, when its version is still knownVersion: pollers pay
	// for data only when something changed. An unknown instance gets ErrNotFound.
	GetCustomStatus(ctx context.Context, instance string, knownVersion int64) (status CustomStatus, changed bool, err error)

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
	// LockFor is the instance locks' lease: a turn not acked, renewed or
	// abandoned by then may be taken over by another fetch.
	LockFor time.Duration
	// PollFor is how long to wait for ready work when there is none (0:
	// answer at once).
	PollFor time.Duration
	// Instance names the one instance to lock (a process that must run a
	// turn no worker will run, see runtime.Client.TerminateNow); "" takes any
	// ready ones.
	Instance string
	// FromCache lets a store that caches histories (CachedTurnCommitter)
	// answer, for timers its own acks queued that fell due, with turns built
	// from the cache: Cached set, not locked, one per instance, its messages
	// every timer of it that fell due (a turn for one would find the others
	// visible, and be stale). Such a turn commits with CommitCachedTurn and
	// an empty work token; when that is stale, the timers are still queued,
	// for a named fetch or any other.
	FromCache bool
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
