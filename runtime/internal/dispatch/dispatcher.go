package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// Dispatcher runs one process's orchestration and activity dispatchers:
// the fetch loops, the turn and activity slots, lock renewal, and the one
// commit path with its fast paths (shortcuts.go). runtime.Runtime is its
// public face.
type Dispatcher struct {
	p    provider.Provider
	reg  *engine.Registry
	opts Options

	mu      sync.Mutex
	started bool
	// stopFetching ends the dispatch loops; hardStop cancels running activities.
	stopFetching context.CancelFunc
	hardStop     context.CancelFunc
	hardCtx      context.Context
	loops        sync.WaitGroup
	// workers run turns and activities (counted in loops); bodies run the
	// activities' functions while workers renew their leases (counted in
	// bodyGoroutines, which Shutdown does not wait for: an activity that
	// ignores its cancelled context does not hold shutdown up).
	workers        *workers
	bodies         *workers
	bodyGoroutines sync.WaitGroup
	// fetchCtx ends at shutdown; the slots bound running turns and
	// activities, whichever path (fetch or shortcut) brought them.
	fetchCtx      context.Context
	turnSlots     chan struct{}
	activitySlots chan struct{}
	// waitingTurns counts turns continued from activity acks that wait for
	// a turn slot (see reportActivity).
	waitingTurns atomic.Int64
	// noDirectStart: the store answered a direct start ErrUnsupported.
	noDirectStart atomic.Bool

	ndMu      sync.Mutex
	ndStreaks map[string]int

	// quiet are the quiet sets of the turns this process committed last.
	quiet quietSets

	outage outage

	// capability is what this process's fetches admit: the orchestrations
	// and versions it registers, read at Start (capability.go).
	capability *provider.Capability

	metrics *metrics
}

// reconnected is closed when the store reports it is reachable again; nil
// (never closed) for a provider that cannot tell.
func (r *Dispatcher) reconnected() <-chan struct{} {
	if rc, ok := r.p.(provider.Reconnector); ok {
		return rc.Reconnected()
	}
	return nil
}

// New returns a dispatcher for the registry's code on provider p. opts must
// have its defaults applied (runtime.Options.withDefaults).
func New(p provider.Provider, reg *engine.Registry, opts Options) *Dispatcher {
	return &Dispatcher{p: p, reg: reg, opts: opts, metrics: newMetrics(opts.MeterProvider)}
}

// Start launches the dispatch loops. They run until Shutdown or until ctx ends.
func (r *Dispatcher) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return errors.New("runtime already started")
	}
	if err := r.opts.ActivityTags.Validate(); err != nil {
		return fmt.Errorf("runtime options: ActivityTags: %w", err)
	}
	r.started = true
	r.capability = &provider.Capability{Orchestrations: r.reg.Orchestrations()}
	fetchCtx, stop := context.WithCancel(ctx)
	r.hardCtx, r.hardStop = context.WithCancel(context.WithoutCancel(ctx))
	r.stopFetching, r.fetchCtx = stop, fetchCtx
	r.workers = newWorkers(&r.loops, fetchCtx.Done())
	r.bodies = newWorkers(&r.bodyGoroutines, r.hardCtx.Done())
	// Both slot pools exist before any loop starts: a turn reads
	// activitySlots to decide eager dispatch and local activities.
	r.turnSlots = make(chan struct{}, r.opts.OrchestrationConcurrency)
	if r.opts.ActivityConcurrency > 0 {
		r.activitySlots = make(chan struct{}, r.opts.ActivityConcurrency)
	}
	for range min(r.opts.OrchestrationPollers, r.opts.OrchestrationConcurrency) {
		r.loops.Go(func() { r.orchestrationLoop(fetchCtx, r.turnSlots) })
	}
	if r.activitySlots != nil {
		for range min(r.opts.ActivityPollers, r.opts.ActivityConcurrency) {
			r.loops.Go(func() { r.activityLoop(fetchCtx, r.activitySlots) })
		}
	}
	r.loops.Go(func() { r.announce(fetchCtx, r.p) })
	if r.activitySlots != nil && r.opts.MaxSessions >= 0 {
		r.loops.Go(func() { r.keepSessions(fetchCtx) })
	}
	r.opts.Logger.Info("duroxide runtime started", "worker", r.opts.WorkerID,
		"orchestrationConcurrency", r.opts.OrchestrationConcurrency, "activityConcurrency", max(r.opts.ActivityConcurrency, 0))
	return nil
}

// Shutdown stops fetching work and waits for in-flight turns and activities.
// Activities still running after DrainTimeout (or when ctx ends) are
// cancelled and their items handed back at once, without counting an attempt,
// so another worker picks them up.
func (r *Dispatcher) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	if !r.started {
		r.mu.Unlock()
		return nil
	}
	r.stopFetching()
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.loops.Wait(); close(done) }()
	drain := time.NewTimer(r.opts.DrainTimeout)
	defer drain.Stop()
	select {
	case <-done:
		r.hardStop()
		r.releaseSessions(ctx)
		r.withdraw(ctx)
		return nil
	case <-drain.C:
	case <-ctx.Done():
	}
	r.opts.Logger.Warn("drain timeout: cancelling running activities")
	r.hardStop()
	select {
	case <-done:
		r.releaseSessions(ctx)
		r.withdraw(ctx)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutdown: %w", ctx.Err())
	}
}

// sleep waits d, or less when ctx ends or woken closes (a store's
// reconnection, from provider.Reconnector; nil never closes).
func sleep(ctx context.Context, d time.Duration, woken <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-woken:
	case <-ctx.Done():
	}
}
