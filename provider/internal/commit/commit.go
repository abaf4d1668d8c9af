// Package commit serves a provider.CommitRequest with a store's commit
// paths. It holds which combinations a request may carry and which path
// each takes, so each store implements only the paths.
//
// It imports provider and provider/internal/encode only.
package commit

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// Paths are a store's ways to commit. Each validates its own arguments and
// is atomic.
type Paths interface {
	// Turn acks a locked turn.
	Turn(ctx context.Context, token string, ack provider.OrchestrationAck) error
	// TurnLeasing acks a locked turn and leases the worker items at lease.
	TurnLeasing(ctx context.Context, token string, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) ([]*provider.WorkItemLease, error)
	// TurnNext acks a locked turn, leases, and locks instance's next turn.
	TurnNext(ctx context.Context, instance, token string, ack provider.OrchestrationAck, lease []int, leaseFor, lockFor time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error)
	// FirstTurn commits a new instance's first turn, or reports it not new.
	FirstTurn(ctx context.Context, instance string, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) (bool, []*provider.WorkItemLease, error)
	// CachedTurn commits a turn built from the cache with the activity's
	// ack (workToken), or alone ("": a timers' turn).
	CachedTurn(ctx context.Context, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) ([]*provider.WorkItemLease, error)
	// Activity acks an activity, queuing its result when not nil.
	Activity(ctx context.Context, token string, result *provider.WorkItem) error
	// ActivityQuietly acks an activity quietly when its history still ends at lastEvent.
	ActivityQuietly(ctx context.Context, token string, result provider.WorkItem, lastEvent int64) (bool, error)
	// ActivityNext acks an activity and locks its instance's turn.
	ActivityNext(ctx context.Context, token string, result provider.WorkItem, lockFor time.Duration) (*provider.OrchestrationItem, error)
}

// Start serves a provider.StartRequest: queue queues the start and its
// events; queueLocking queues a start alone and locks its first turn.
func Start(ctx context.Context, req provider.StartRequest,
	queue func(ctx context.Context, start provider.WorkItem, events []provider.WorkItem, reuse provider.IDReusePolicy) error,
	queueLocking func(ctx context.Context, start provider.WorkItem, reuse provider.IDReusePolicy, lockFor time.Duration) (*provider.OrchestrationItem, error),
) (*provider.OrchestrationItem, error) {
	switch {
	case req.LockFor == 0:
		return nil, queue(ctx, req.Start, req.Events, req.Reuse)
	case len(req.Events) > 0:
		return nil, encode.Invalid("start", req.Start.Instance, "an eager start (LockFor) queues no events")
	}
	return queueLocking(ctx, req.Start, req.Reuse, req.LockFor)
}

// Route answers req with the path its fields name, once req.Validate
// passed: a refused request reaches no path.
func Route(ctx context.Context, req provider.CommitRequest, p Paths) (provider.Committed, error) {
	var c provider.Committed
	if err := req.Validate(); err != nil {
		return c, err
	}
	var err error
	switch t := req.Turn; {
	case t == nil:
		return routeActivity(ctx, *req.Activity, req.LockNextFor, p)
	case t.Hold == provider.TurnLocked:
		return routeLocked(ctx, *t, req.LockNextFor, p)
	case t.Hold == provider.TurnNew:
		c.Created, c.Leases, err = p.FirstTurn(ctx, t.Instance, t.Ack, t.Lease, t.LeaseFor)
		return c, err
	}
	return routeCached(ctx, req, p)
}

func routeLocked(ctx context.Context, t provider.TurnCommit, lockNext time.Duration, p Paths) (provider.Committed, error) {
	var c provider.Committed
	var err error
	switch {
	case lockNext > 0:
		c.Leases, c.Next, err = p.TurnNext(ctx, t.Instance, t.LockToken, t.Ack, t.Lease, t.LeaseFor, lockNext)
	case len(t.Lease) > 0:
		c.Leases, err = p.TurnLeasing(ctx, t.LockToken, t.Ack, t.Lease, t.LeaseFor)
	default:
		err = p.Turn(ctx, t.LockToken, t.Ack)
	}
	return c, err
}

func routeCached(ctx context.Context, req provider.CommitRequest, p Paths) (provider.Committed, error) {
	var c provider.Committed
	t, workToken := req.Turn, ""
	if a := req.Activity; a != nil {
		workToken = a.LockToken
	}
	var err error
	c.Leases, err = p.CachedTurn(ctx, workToken, t.Cached, t.Ack, t.Lease, t.LeaseFor)
	return c, err
}

func routeActivity(ctx context.Context, a provider.ActivityResult, lockNext time.Duration, p Paths) (provider.Committed, error) {
	var c provider.Committed
	var err error
	switch {
	case a.QuietAfter > 0:
		c.Quiet, err = p.ActivityQuietly(ctx, a.LockToken, *a.Result, a.QuietAfter)
	case lockNext > 0:
		c.Next, err = p.ActivityNext(ctx, a.LockToken, *a.Result, lockNext)
	default:
		err = p.Activity(ctx, a.LockToken, a.Result)
	}
	return c, err
}
