package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// activityLoop fetches activities while an execution slot is free and runs
// each on a goroutine of the workers (workers.go), until ctx ends. A poller holds no slot
// while it waits: an activity leased with its turn's commit (see ackTurn)
// may take it.
func (r *Dispatcher) activityLoop(ctx context.Context, slots chan struct{}) {
	failures := 0
	for {
		if waitForFreeSlots(ctx, slots, 1) == 0 {
			return
		}
		reconnected := r.reconnected()
		lease, err := r.p.FetchWorkItem(ctx, provider.FetchWorkRequest{LockFor: r.opts.ActivityLockTimeout, PollFor: r.opts.PollTimeout,
			Tags: r.opts.ActivityTags, Sessions: r.sessionConfig()})
		if err != nil || lease == nil {
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				failures++
				r.outage.failed(r.opts.Logger, "fetch work item", err)
				sleep(ctx, r.opts.backoff(failures), reconnected)
				continue
			}
			r.outage.succeeded(r.opts.Logger)
			continue
		}
		r.outage.succeeded(r.opts.Logger)
		failures = 0
		slots <- struct{}{}
		r.workers.Go(func() {
			defer func() { <-slots }()
			r.runActivities(lease)
		})
	}
}

// activitySlot is the activity slot a goroutine holds while it runs
// activities: the turn an activity's result commits may hand the slot on to
// an activity it schedules (next), which the goroutine runs then.
type activitySlot struct{ next *provider.WorkItemLease }

// runActivities runs lease and the activities handed on to its slot.
func (r *Dispatcher) runActivities(lease *provider.WorkItemLease) {
	slot := &activitySlot{}
	for lease != nil {
		r.runActivity(lease, slot)
		lease, slot.next = slot.next, nil
	}
}

// runActivity executes one leased activity and reports its result.
func (r *Dispatcher) runActivity(lease *provider.WorkItemLease, slot *activitySlot) {
	ctx := context.WithoutCancel(r.hardCtx)
	item := lease.Item
	log := r.opts.Logger.With("instance", item.Instance, "activity", item.Name, "id", item.ID, "attempt", lease.AttemptCount)
	switch {
	case lease.DecodeError != nil:
		r.retryOrFailActivity(ctx, slot, lease, &provider.ErrorDetails{Class: provider.ErrorInfrastructure, Message: lease.DecodeError.Error()})
		return
	case lease.State.Cancelled():
		log.Info("skipping activity: its orchestration no longer waits for it", "state", lease.State)
		r.ackActivity(ctx, slot, lease, nil)
		return
	case lease.AttemptCount > r.opts.MaxAttempts:
		r.metrics.poisoned(ctx, "activity")
		r.ackActivity(ctx, slot, lease, engine.ActivityFailed(item, &provider.ErrorDetails{Class: provider.ErrorInfrastructure,
			Message: fmt.Sprintf("poison message: activity delivered %d times without completing", lease.AttemptCount)}))
		return
	}
	fn, err := engine.LookupActivity(r.reg, item.Name)
	if err != nil {
		r.retryOrFailActivity(ctx, slot, lease, engine.DetailsOf(err))
		return
	}
	began := time.Now()
	r.metrics.activityStarted(ctx, item, began)
	res := r.execute(lease, fn)
	r.metrics.activityDone(ctx, item.Name, res.outcomeName(), time.Since(began))
	switch res.outcome {
	case activityLost:
		r.metrics.lockLost(ctx, "activity")
		log.Warn("activity result discarded: its lease was lost or it was cancelled")
	case activityCancelled:
		log.Info("activity cancelled: its orchestration ended")
		r.ackActivity(ctx, slot, lease, nil)
	case activityInterrupted:
		log.Warn("activity interrupted by shutdown; handing it back")
		if err := r.p.AbandonWorkItem(ctx, provider.AbandonRequest{LockToken: lease.LockToken, IgnoreAttempt: true}); err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
			log.Error("hand back failed; the lease will expire", "error", err)
		}
	default:
		if res.err != nil {
			r.ackActivity(ctx, slot, lease, engine.ActivityFailed(item, engine.DetailsOf(res.err)))
			return
		}
		r.ackActivity(ctx, slot, lease, &provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: item.Instance,
			ExecutionID: item.ExecutionID, ID: item.ID, Result: res.out})
	}
}

type activityOutcome int

type activityResult struct {
	out     string
	err     error
	outcome activityOutcome
}

const (
	activityFinished activityOutcome = iota
	activityCancelled
	activityLost
	activityInterrupted
)

// execute runs fn while renewing its lease. The activity's context is
// cancelled when its orchestration ends (renewal reports it), when the lease is
// lost, or at hard shutdown.
func (r *Dispatcher) execute(lease *provider.WorkItemLease, fn engine.ActivityFunc) activityResult {
	item := lease.Item
	info := engine.ActivityInfo{Instance: item.Instance, ExecutionID: item.ExecutionID, ActivityID: item.ID, Name: item.Name, Attempt: lease.AttemptCount,
		Tag: item.Tag, Session: item.Session, Worker: r.opts.WorkerID}
	actx, cancel := context.WithCancel(engine.WithActivityInfo(r.hardCtx, info))
	defer cancel()
	done := make(chan activityResult, 1)
	r.bodies.Go(func() {
		out, err := r.callActivity(actx, fn, item, lease.AttemptCount, false)
		done <- activityResult{out: out, err: err}
	})
	renew := time.NewTicker(r.opts.ActivityRenewInterval)
	defer renew.Stop()
	outcome := activityFinished
	for {
		select {
		case res := <-done:
			res.outcome = outcome
			return res
		case <-r.hardCtx.Done():
			return activityResult{err: r.hardCtx.Err(), outcome: activityInterrupted}
		case <-renew.C:
			state, err := r.p.RenewWorkItemLock(context.WithoutCancel(actx), provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: r.opts.ActivityLockTimeout})
			switch {
			case errors.Is(err, provider.ErrLockNotHeld):
				cancel()
				return activityResult{err: err, outcome: activityLost}
			case err != nil:
				r.opts.Logger.Warn("lease renewal failed; will retry", "instance", item.Instance, "error", err)
			case state.Cancelled() && outcome != activityCancelled:
				outcome = activityCancelled
				cancel()
			}
		}
	}
}

// ackActivity reports the activity's outcome. When the store cannot take it
// (restarting, unreachable), the result is kept and the report retried with
// backoff, the lease renewed between tries: handing the item back would
// throw the finished result away, run the activity again and count an
// attempt toward the poison limit. It gives up only when the lease is lost
// (another worker owns the item now) or at hard shutdown.
func (r *Dispatcher) ackActivity(ctx context.Context, slot *activitySlot, lease *provider.WorkItemLease, completion *provider.WorkItem) {
	log := r.opts.Logger.With("instance", lease.Item.Instance, "activity", lease.Item.Name)
	renewedAt := time.Now()
	for attempt := 1; ; attempt++ {
		err := r.reportActivity(ctx, slot, lease, completion, attempt == 1)
		switch {
		case err == nil:
			if attempt > 1 {
				log.Info("activity result reported", "tries", attempt)
			}
			return
		case errors.Is(err, provider.ErrLockNotHeld):
			r.metrics.lockLost(ctx, "activity")
			log.Warn("activity result discarded: lease lost or activity cancelled", "error", err)
			return
		case attempt == 1:
			log.Warn("report activity result failed; keeping the result and retrying", "error", err)
		}
		if time.Since(renewedAt) >= r.opts.ActivityLockTimeout {
			log.Error("activity result dropped: its lease expired before the store took it; the activity runs again elsewhere",
				"tries", attempt, "error", err)
			return
		}
		sleep(r.hardCtx, r.opts.backoff(attempt), nil)
		if r.hardCtx.Err() != nil {
			log.Warn("activity result not reported before shutdown; its lease expires and the activity runs again", "error", err)
			return
		}
		_, rerr := r.p.RenewWorkItemLock(ctx, provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: r.opts.ActivityLockTimeout})
		switch {
		case rerr == nil:
			renewedAt = time.Now()
		case errors.Is(rerr, provider.ErrLockNotHeld):
			log.Warn("activity result discarded: lease lost while the store was unreachable", "error", rerr)
			return
		}
	}
}

// retryOrFailActivity hands an item that cannot run here back with backoff,
// or fails it to its orchestration at the poison limit.
func (r *Dispatcher) retryOrFailActivity(ctx context.Context, slot *activitySlot, lease *provider.WorkItemLease, d *provider.ErrorDetails) {
	if lease.AttemptCount >= r.opts.MaxAttempts {
		r.metrics.poisoned(ctx, "activity")
		r.opts.Logger.Error("failing activity", "instance", lease.Item.Instance, "activity", lease.Item.Name, "class", d.Class, "error", d.Message)
		r.ackActivity(ctx, slot, lease, engine.ActivityFailed(lease.Item, d))
		return
	}
	r.metrics.stalled(ctx, "activity", d.Class)
	r.opts.Logger.Warn("activity cannot run; retrying with backoff", "instance", lease.Item.Instance,
		"activity", lease.Item.Name, "attempt", lease.AttemptCount, "class", d.Class, "error", d.Message)
	if err := r.p.AbandonWorkItem(ctx, provider.AbandonRequest{LockToken: lease.LockToken, Delay: r.opts.backoff(lease.AttemptCount)}); err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
		r.opts.Logger.Error("abandon failed; the lease will expire", "instance", lease.Item.Instance, "error", err)
	}
}
