package dispatch

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// tryAcquire takes up to n slots that are free right now and returns how
// many it took.
func tryAcquire(slots chan struct{}, n int) int {
	for i := range n {
		select {
		case slots <- struct{}{}:
		default:
			return i
		}
	}
	return n
}

// accepting reports whether this runtime still takes new work: shortcuts
// stop with the fetch loops at shutdown.
func (r *Dispatcher) accepting() bool { return r.fetchCtx != nil && r.fetchCtx.Err() == nil }

// ackTurn commits a turn. When activity slots are free, the turn's
// activities registered here are leased in the same commit and run at once:
// no fetch, and no other worker woken for them (eager dispatch). With
// continuing, while this runtime takes work, the commit also locks the
// instance's next turn when messages reached it meanwhile (an activity's
// result, an event, its own continue-as-new) and returns it: no fetch, no
// wake-up.
//
// A turn that ends the instance (completed, failed, terminated) is not
// continued: messages reaching it now are only dropped, by any dispatcher,
// and asking for them cost the store a lookup on every last turn.
func (r *Dispatcher) ackTurn(ctx context.Context, item *provider.OrchestrationItem, ack provider.OrchestrationAck, continuing bool, quiet *engine.QuietWaits) (*provider.OrchestrationItem, error) {
	ends := ack.Metadata.Status.Terminal() && ack.Metadata.Status != provider.StatusContinuedAsNew
	req := provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnLocked, Instance: item.Instance, LockToken: item.LockToken, Ack: ack}}
	if continuing && !ends && r.accepting() {
		req.LockNextFor = r.opts.OrchestrationLockTimeout
	}
	var next *provider.OrchestrationItem
	err := r.commitLeasing(ack, func(lease []int) ([]*provider.WorkItemLease, error) {
		req.Turn.Lease, req.Turn.LeaseFor = lease, r.opts.ActivityLockTimeout
		c, err := r.p.Commit(ctx, req)
		// The set is noted before the commit's leased activities start,
		// whose results it judges; a continued turn judges afresh.
		if err == nil && c.Next == nil {
			r.quiet.note(item.Instance, ack, quiet)
		}
		next = c.Next
		return c.Leases, err
	})
	return next, err
}

// commitLeasing runs commit with the positions of the ack's activities this
// process can run now (none when it runs no activities or is shutting down),
// holding an activity slot for each, and runs the activities commit leased.
func (r *Dispatcher) commitLeasing(ack provider.OrchestrationAck, commit func(lease []int) ([]*provider.WorkItemLease, error)) error {
	return r.commitLeasingFrom(nil, ack, commit)
}

// commitLeasingFrom is commitLeasing for a caller that holds an activity
// slot it is done with (own, nil for none): the first activity leased takes
// it over (own.next), for the caller to run, instead of another slot.
func (r *Dispatcher) commitLeasingFrom(own *activitySlot, ack provider.OrchestrationAck, commit func(lease []int) ([]*provider.WorkItemLease, error)) error {
	if len(ack.WorkerItems) == 0 || r.activitySlots == nil || !r.accepting() {
		_, err := commit(nil)
		return err
	}
	runnable := r.runnableHere(ack.WorkerItems)
	held := 0
	if own != nil && len(runnable) > 0 {
		held = 1
	}
	acquired := tryAcquire(r.activitySlots, len(runnable)-held)
	leases, err := commit(runnable[:held+acquired])
	if held == 1 && len(leases) > 0 {
		own.next, leases = leases[0], leases[1:]
	}
	for range acquired - len(leases) {
		<-r.activitySlots
	}
	for _, lease := range leases {
		r.workers.Go(func() {
			defer func() { <-r.activitySlots }()
			r.runActivities(lease)
		})
	}
	return err
}

// runnableHere lists the positions of the activities this process has code
// for and takes the tag of; others are left to the workers that do.
func (r *Dispatcher) runnableHere(items []provider.WorkItem) []int {
	var at []int
	for i, w := range items {
		if w.Kind != provider.WorkActivityExecute {
			continue
		}
		if w.Session == "" && r.hasActivity(w.Name, w.Tag) { // a session's owner fetches its items
			at = append(at, i)
		}
	}
	return at
}

// reportActivity acks an activity. On the first report, while this runtime
// takes work, the commit also locks the activity's orchestration when no
// one holds it and returns its next turn, which runs here: no fetch, no
// wake-up of other dispatchers. With no turn slot free the turn waits here
// for one, locked, as a fetched turn would (up to as many turns as there
// are slots; beyond that the ack is plain and a fetch takes the turn
// later). Retries after a store error ack plainly.
func (r *Dispatcher) reportActivity(ctx context.Context, slot *activitySlot, lease *provider.WorkItemLease, completion *provider.WorkItem, first bool) error {
	if !first || completion == nil || !r.accepting() {
		return r.commitResult(ctx, lease, completion)
	}
	done, queued, err := r.ackQuietly(ctx, lease, completion)
	if done {
		return err
	}
	if done, err := r.reportWithCachedTurn(ctx, slot, lease, completion, queued); done {
		return err
	}
	turnSlot := tryAcquire(r.turnSlots, 1) == 1
	if !turnSlot && r.waitingTurns.Add(1) > int64(cap(r.turnSlots)) {
		r.waitingTurns.Add(-1)
		return r.commitResult(ctx, lease, completion)
	}
	release := func() {
		if turnSlot {
			<-r.turnSlots
		} else {
			r.waitingTurns.Add(-1)
		}
	}
	c, err := r.p.Commit(ctx, provider.CommitRequest{
		Activity:    &provider.ActivityResult{LockToken: lease.LockToken, Result: completion},
		LockNextFor: r.opts.OrchestrationLockTimeout,
	})
	if c.Next == nil {
		release()
		return err
	}
	if !r.capability.Admits(c.Next.OrchestrationName, c.Next.Version) {
		release()
		r.handBackUnadmitted(ctx, c.Next)
		return err
	}
	r.workers.Go(func() {
		if !turnSlot {
			r.turnSlots <- struct{}{} // turns are short: a slot frees soon, even at shutdown
			r.waitingTurns.Add(-1)
		}
		defer func() { <-r.turnSlots }()
		r.runOrchestrationItem(context.WithoutCancel(ctx), c.Next)
	})
	return err
}

// commitResult commits an activity's result (nil: the item is only removed).
func (r *Dispatcher) commitResult(ctx context.Context, lease *provider.WorkItemLease, completion *provider.WorkItem) error {
	_, err := r.p.Commit(ctx, provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: lease.LockToken, Result: completion}})
	return err
}
