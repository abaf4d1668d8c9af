package storeengine

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Driver is a store below the engine: typed operations on its tables. Each
// is atomic and reports the provider's errors (provider.Error with the
// contract's sentinels). The engine validated each request before it
// reaches a driver, and keeps the cache and the timer notes around it; the
// driver calls back Engine.Acked and Engine.Fetched (or TimersTaken) as its
// transactions commit.
type Driver interface {
	// LockReady locks up to p.Max ready turns: those of p.Named first (their
	// timers fell due), then any instance with a visible message and no
	// live lock but those in p.Exclude. With none, it reports when the next
	// delayed message falls due, when it can say.
	LockReady(ctx context.Context, p ReadyParams) (Ready, error)
	// LockInstance locks the named instance's turn, or returns nil when it
	// has none or another holds it.
	LockInstance(ctx context.Context, instance string, lockFor time.Duration) (*provider.OrchestrationItem, error)
	// LockWork leases the next visible activity p.Tags takes, or returns
	// nil.
	LockWork(ctx context.Context, p WorkParams) (*provider.WorkItemLease, error)

	// Start queues a start and its events (provider.StartRequest without
	// LockFor).
	Start(ctx context.Context, req provider.StartRequest) error
	// StartLocking queues a start alone and locks its first turn.
	StartLocking(ctx context.Context, req provider.StartRequest) (*provider.OrchestrationItem, error)

	// Turn acks a locked turn.
	Turn(ctx context.Context, t provider.TurnCommit) error
	// TurnLeasing acks a locked turn and leases the worker items at t.Lease.
	TurnLeasing(ctx context.Context, t provider.TurnCommit) ([]*provider.WorkItemLease, error)
	// TurnNext acks a locked turn, leases, and locks the instance's next
	// turn for lockNext.
	TurnNext(ctx context.Context, t provider.TurnCommit, lockNext time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error)
	// FirstTurn commits a new instance's first turn, or reports it not new.
	FirstTurn(ctx context.Context, t provider.TurnCommit) (created bool, leases []*provider.WorkItemLease, err error)
	// CachedTurn commits a turn built from the cache (t.Cached) with the
	// activity's ack (workToken), or alone ("": a timers' turn).
	CachedTurn(ctx context.Context, workToken string, t provider.TurnCommit) ([]*provider.WorkItemLease, error)

	// Activity acks an activity, queuing its result when not nil.
	Activity(ctx context.Context, token string, result *provider.WorkItem) error
	// ActivityQuietly acks an activity and queues its result quietly when
	// the instance is still as q says.
	ActivityQuietly(ctx context.Context, token string, result provider.WorkItem, q QuietCheck) (quiet bool, err error)
	// ActivityNext acks an activity and locks its instance's turn.
	ActivityNext(ctx context.Context, token string, result provider.WorkItem, lockFor time.Duration) (*provider.OrchestrationItem, error)

	// AbandonTurn releases a turn's lock without committing, as
	// provider.Provider.AbandonOrchestrationItem.
	AbandonTurn(ctx context.Context, p AbandonParams) error
	// RenewTurn extends a turn's lock.
	RenewTurn(ctx context.Context, req provider.RenewRequest) error
	// AbandonWork releases an activity's lease, visible again after p.Delay.
	AbandonWork(ctx context.Context, p AbandonParams) error
	// RenewWork extends an activity's lease and reports its execution's
	// state.
	RenewWork(ctx context.Context, req provider.RenewRequest) (provider.ExecutionState, error)
}

// AbandonParams are a validated hand-back: LastError is the encoded cause
// (nil for none, and always for an activity).
type AbandonParams struct {
	LockToken     string
	Delay         time.Duration
	IgnoreAttempt bool
	LastError     *string
}

// ReadyParams are a look for ready turns.
type ReadyParams struct {
	Max     int
	LockFor time.Duration
	// Named are instances whose timers, queued by this process, fell due:
	// their histories are mostly cached.
	Named []string
	// Exclude are instances a look must leave: their cached timer turns are
	// in flight, or their timers are about to fall due.
	Exclude []string
	// Capability, when not nil, restricts the look for any instance (not
	// Named) as provider.FetchRequest.Capability says.
	Capability *provider.Capability
}

// WorkParams are a look for an activity.
type WorkParams struct {
	LockFor  time.Duration
	Tags     provider.TagFilter
	Sessions *provider.SessionConfig
}

// Ready is what a look for ready turns found.
type Ready struct {
	Items []*provider.OrchestrationItem
	// NextDue is when the earliest delayed message falls due, when nothing
	// was found and the store can say; zero otherwise.
	NextDue time.Time
}

// QuietCheck is what an activity's result must find in the store to be
// queued quietly: the instance is the incarnation and execution the history
// cache holds, and its history still ends at LastEvent.
type QuietCheck struct {
	Incarnation, Execution, LastEvent int64
}
