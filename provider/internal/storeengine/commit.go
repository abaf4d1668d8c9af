package storeengine

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// Commit serves req with the driver operation its fields name, once
// req.Validate passed: a refused request reaches no driver.
func (e *Engine) Commit(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	var c provider.Committed
	if err := req.Validate(); err != nil {
		return c, err
	}
	var err error
	switch t := req.Turn; {
	case t == nil:
		return e.commitActivity(ctx, *req.Activity, req.LockNextFor)
	case t.Hold == provider.TurnLocked:
		return e.commitLocked(ctx, *t, req.LockNextFor)
	case t.Hold == provider.TurnNew:
		c.Created, c.Leases, err = e.driver.FirstTurn(ctx, *t)
		return c, err
	}
	return e.commitCached(ctx, req)
}

func (e *Engine) commitLocked(ctx context.Context, t provider.TurnCommit, lockNext time.Duration) (provider.Committed, error) {
	var c provider.Committed
	var err error
	switch {
	case lockNext > 0:
		c.Leases, c.Next, err = e.driver.TurnNext(ctx, t, lockNext)
	case len(t.Lease) > 0:
		c.Leases, err = e.driver.TurnLeasing(ctx, t)
	default:
		err = e.driver.Turn(ctx, t)
	}
	return c, err
}

// commitCached commits a turn built from the cache. A timers' turn (no
// activity) leaves the in-flight set whatever the outcome: committed, it is
// no longer owed; refused, its timers are for a look for ready work.
func (e *Engine) commitCached(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	var c provider.Committed
	t, workToken := req.Turn, ""
	if a := req.Activity; a != nil {
		workToken = a.LockToken
	} else {
		defer e.InFlight.Done(t.Cached.Instance)
	}
	var err error
	c.Leases, err = e.driver.CachedTurn(ctx, workToken, *t)
	return c, err
}

func (e *Engine) commitActivity(ctx context.Context, a provider.ActivityResult, lockNext time.Duration) (provider.Committed, error) {
	var c provider.Committed
	var err error
	switch {
	case a.QuietAfter > 0:
		c.Quiet, err = e.activityQuietly(ctx, a.LockToken, *a.Result, a.QuietAfter)
	case lockNext > 0:
		c.Next, err = e.driver.ActivityNext(ctx, a.LockToken, *a.Result, lockNext)
	default:
		err = e.driver.Activity(ctx, a.LockToken, a.Result)
	}
	return c, err
}

// activityQuietly acks an activity quietly when the cache holds the history
// the caller judged from (its incarnation is what the store must still
// have); plainly otherwise.
func (e *Engine) activityQuietly(ctx context.Context, token string, result provider.WorkItem, lastEvent int64) (bool, error) {
	incarnation, ok := e.Hist.Holds(result.Instance, result.ExecutionID, lastEvent)
	if !ok {
		return false, e.driver.Activity(ctx, token, &result)
	}
	return e.driver.ActivityQuietly(ctx, token, result, QuietCheck{Incarnation: incarnation, Execution: result.ExecutionID, LastEvent: lastEvent})
}

// StartInstance serves a provider.StartRequest: queued with its events, or
// (LockFor) alone with its first turn locked.
func (e *Engine) StartInstance(ctx context.Context, req provider.StartRequest) (*provider.OrchestrationItem, error) {
	switch {
	case req.LockFor == 0:
		return nil, e.driver.Start(ctx, req)
	case len(req.Events) > 0:
		return nil, encode.Invalid("start", req.Start.Instance, "an eager start (LockFor) queues no events")
	}
	return e.driver.StartLocking(ctx, req)
}
