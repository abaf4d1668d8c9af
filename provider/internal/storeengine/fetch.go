package storeengine

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
)

// Fetch serves req, once req.Validate passed: a turn built from the cache
// alone (Deliver), the named instance's turn, or any ready turns.
func (e *Engine) Fetch(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	switch {
	case len(req.Deliver) > 0:
		return e.fromCache(req), nil
	case req.Instance == "":
		return e.ready(ctx, req)
	}
	item, err := e.named(ctx, req.Instance, req.LockFor)
	if err != nil || item == nil {
		return nil, err
	}
	return []*provider.OrchestrationItem{item}, nil
}

// fromCache builds the turn that delivers req.Deliver from the cache, or
// none.
func (e *Engine) fromCache(req provider.FetchRequest) []*provider.OrchestrationItem {
	last := req.Deliver[len(req.Deliver)-1]
	turn := e.Hist.CachedTurn(req.Instance, last.ExecutionID, last, req.Deliver[:len(req.Deliver)-1]...)
	if turn == nil {
		return nil
	}
	return []*provider.OrchestrationItem{turn}
}

// named locks one instance's turn. A stale cached timer turn of the
// instance falls back to this, so the instance leaves the in-flight set.
func (e *Engine) named(ctx context.Context, instance string, lockFor time.Duration) (*provider.OrchestrationItem, error) {
	const op = "fetch instance item"
	if err := e.CheckOpen(op); err != nil {
		return nil, err
	}
	e.InFlight.Done(instance)
	return e.driver.LockInstance(ctx, instance, lockFor)
}

// ready long-polls for ready turns. Timers this process queued that fell
// due are built from the history cache where it can (req.FromCache) or
// asked for by name, so that they fire about as cheaply as turns continue.
// The look for any ready work runs instead whenever work was announced
// since the last look or a poll interval passed (wake.ScanGate), so timers
// never starve other work, and whenever no timer of this process is due; it
// also finds a timer not taken by name (another process took its turn, or
// the store's clock is behind). It leaves out the instances of cached
// timer turns in flight and of timers about to fall due
// (wake.Due.Upcoming): locking one would make a turn stale.
func (e *Engine) ready(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	const op = "fetch orchestration items"
	if err := e.CheckOpen(op); err != nil {
		return nil, err
	}
	var items []*provider.OrchestrationItem
	err := wake.Poll(ctx, req.PollFor, e.cfg.PollInterval, e.OrchestratorWork, e.Due, e.cfg.Closed, func() (bool, time.Time, error) {
		var nextDue time.Time
		var err error
		items, nextDue, err = e.lookOnce(ctx, req)
		return len(items) > 0, nextDue, err
	})
	return items, err
}

// lookOnce is one look of ready: the cached timer turns due, then the
// driver's look for the rest.
func (e *Engine) lookOnce(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, time.Time, error) {
	owed, now := e.gate.Owed(), time.Now()
	var turns []*provider.OrchestrationItem
	var named []string
	if !owed {
		turns, named = e.Hist.DueTurns(e.Due.ReadyTimers(now, req.Max), req.FromCache, &e.InFlight)
	}
	if len(turns) > 0 && len(named) == 0 {
		return turns, time.Time{}, nil
	}
	got, err := e.driver.LockReady(ctx, ReadyParams{
		Max: req.Max - len(turns), LockFor: req.LockFor, Named: named,
		Exclude:    append(e.InFlight.List(), e.Due.Upcoming(now, owed)...),
		Capability: req.Capability,
	})
	switch {
	case err != nil && len(turns) > 0:
		return turns, time.Time{}, nil // the timers not taken stay for a look
	case err != nil:
		return nil, time.Time{}, err
	}
	if items := append(turns, got.Items...); len(items) > 0 {
		return items, time.Time{}, nil
	}
	return nil, e.Due.Earlier(got.NextDue), nil
}

// FetchWork long-polls for an activity and leases it.
func (e *Engine) FetchWork(ctx context.Context, req provider.FetchWorkRequest) (*provider.WorkItemLease, error) {
	const op = "fetch work item"
	if err := encode.CheckTimeouts(op, req.LockFor, req.PollFor); err != nil {
		return nil, err
	}
	if err := req.Tags.Validate(); err != nil {
		return nil, encode.Invalid(op, "", "%v", err)
	}
	if err := req.Sessions.Validate(); err != nil {
		return nil, encode.Invalid(op, "", "%v", err)
	}
	if err := e.CheckOpen(op); err != nil {
		return nil, err
	}
	params := WorkParams{LockFor: req.LockFor, Tags: req.Tags, Sessions: req.Sessions}
	var lease *provider.WorkItemLease
	err := wake.Poll(ctx, req.PollFor, e.cfg.PollInterval, e.WorkerWork, nil, e.cfg.Closed, func() (bool, time.Time, error) {
		var err error
		lease, err = e.driver.LockWork(ctx, params)
		return lease != nil, time.Time{}, err
	})
	return lease, err
}
