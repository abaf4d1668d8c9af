package dispatch

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// errCachedTurnDeclined stops a turn built from a cached history that would
// run a local activity: that turn commits with the activity's ack, whose
// lease the local activity could outlive; the usual path runs it.
var errCachedTurnDeclined = errors.New("a cached turn does not run local activities")

// reportWithCachedTurn runs the turn that delivers completion, after queued
// (results this process acked quietly), from the history the store caches
// and commits it with the activity's ack in one transaction
// (provider.FetchRequest.Deliver, provider.TurnCached): in a sequence of activities, one commit
// per step, no lock taken first; at the end of a fan-out, one commit for the
// turn that gathers every result. done is false when nothing was
// written: the store holds no such history, other answers are awaited (their
// acks would race this one), no turn slot freed soon enough, the turn did
// not simply run (a failure, a local activity), or the instance changed
// meanwhile; the
// caller then acks as usual, which runs the turn again from the store. An
// error (done) is the ack's: the activity lease lost, or the store failing.
func (r *Dispatcher) reportWithCachedTurn(ctx context.Context, slot *activitySlot, lease *provider.WorkItemLease, completion *provider.WorkItem,
	queued []provider.WorkItem) (done bool, err error) {
	items, err := r.p.Fetch(ctx, provider.FetchRequest{Max: 1, Instance: completion.Instance, FromCache: true,
		Deliver: append(queued[:len(queued):len(queued)], *completion)})
	if err != nil || len(items) == 0 {
		return false, nil
	}
	item := items[0]
	if othersAwaited(item.History, item.Messages) {
		return false, nil
	}
	if !r.awaitTurnSlot(r.opts.ActivityLockTimeout / 3) {
		return false, nil
	}
	defer func() { <-r.turnSlots }()
	return r.runCached(ctx, item, lease, slot)
}

// awaitTurnSlot takes a turn slot, waiting up to d for one. Waiting holds no
// instance lock, only an activity's slot and lease, which is not renewed
// meanwhile: beyond d the activity is acked as usual rather than risk it.
func (r *Dispatcher) awaitTurnSlot(d time.Duration) bool {
	if tryAcquire(r.turnSlots, 1) == 1 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r.turnSlots <- struct{}{}:
		return true
	case <-timer.C:
		return false
	}
}

// runCached runs a turn built from the store's cache and commits it as a
// TurnCached turn: with lease, with the activity's ack (whose slot, own,
// the first activity the turn schedules takes over); without, deleting the
// timers the turn delivers. done is false when nothing was written:
// the turn did not simply run (a failure, a local activity), or the
// instance changed meanwhile.
func (r *Dispatcher) runCached(ctx context.Context, item *provider.OrchestrationItem, lease *provider.WorkItemLease, own *activitySlot) (done bool, err error) {
	r.quiet.forget(item.Instance)
	in, v := engine.PrepareTurn(item, time.Now())
	if v != engine.RunIt {
		return false, nil
	}
	in.StepTimeout = r.opts.StepTimeout
	in.Local = &engine.LocalRunner{
		Has: r.hasActivity,
		Run: func(provider.WorkItem, time.Duration) (provider.WorkItem, error) {
			return provider.WorkItem{}, errCachedTurnDeclined
		},
	}
	err = r.intercepted(ctx, item, &in, func(ctx context.Context) (provider.ExecutionStatus, error) {
		ack, quiet, err := engine.RunTurn(r.reg, in, r.opts.Logger)
		if err != nil {
			return "", declined(err)
		}
		req := provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnCached, Cached: item, Ack: ack}}
		if lease != nil {
			req.Activity = &provider.ActivityResult{LockToken: lease.LockToken, Result: &item.Messages[len(item.Messages)-1]}
		}
		err = r.commitLeasingFrom(own, ack, func(leased []int) ([]*provider.WorkItemLease, error) {
			req.Turn.Lease, req.Turn.LeaseFor = leased, r.opts.ActivityLockTimeout
			c, err := r.p.Commit(ctx, req)
			if err == nil {
				r.quiet.note(item.Instance, ack, quiet)
			}
			return c.Leases, err
		})
		switch {
		case errors.Is(err, provider.ErrStale):
			return "", declined(err)
		case err != nil:
			done = true
			return "", err
		}
		done = true
		r.ndStreak(item.Instance, false)
		return committedStatus(ack), nil
	})
	if !done {
		return false, nil
	}
	return true, err
}

// runCachedTimerTurn runs a timer's turn that a fetch built from the
// store's cache (provider.FetchRequest.FromCache), in the caller's slot. When it
// does not commit, the timer is still queued: the instance is fetched by
// name and its turn runs as any fetched one, or, when it cannot be locked
// now, a dispatcher's fetch takes it later.
func (r *Dispatcher) runCachedTimerTurn(ctx context.Context, item *provider.OrchestrationItem) {
	done, err := r.runCached(ctx, item, nil, nil)
	if done && err == nil {
		return
	}
	if err != nil {
		r.opts.Logger.Warn("commit of a timer's turn failed; fetching the instance", "instance", item.Instance, "error", err)
	}
	next, err := provider.FetchOne(ctx, r.p, provider.FetchRequest{Instance: item.Instance, LockFor: r.opts.OrchestrationLockTimeout})
	if err != nil {
		r.opts.Logger.Warn("fetch of a timer's instance failed; a dispatcher will take it", "instance", item.Instance, "error", err)
		return
	}
	r.runOrchestrationItem(ctx, next)
}

// othersAwaited reports whether the history awaits an activity or child
// that messages do not answer: their answers arrive about now, and each
// cached turn but the first to commit would be stale. Work the history
// records as answered or cancelled is not awaited.
func othersAwaited(history []provider.Event, messages []provider.WorkItem) bool {
	answered := func(id int64) bool {
		return slices.ContainsFunc(messages, func(m provider.WorkItem) bool { return m.ID == id })
	}
	open := map[int64]bool{}
	for _, ev := range history {
		switch {
		case ev.Kind == provider.EventActivityScheduled || ev.Kind == provider.EventSubOrchestrationScheduled:
			if !answered(ev.ID) {
				open[ev.ID] = true
			}
		case ev.SourceID != 0: // a completion, a failure or a CancelRequested
			delete(open, ev.SourceID)
		}
	}
	return len(open) > 0
}
