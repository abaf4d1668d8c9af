package dispatch

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// orchestrationLoop fetches ready instances while turn slots are free, as many
// as there are free slots, and runs each turn in a goroutine of its own,
// until ctx ends. A poller holds no slot while it waits for work: a turn
// continued from an activity's ack (see reportActivity) may take it.
func (r *Dispatcher) orchestrationLoop(ctx context.Context, slots chan struct{}) {
	failures := 0
	for {
		n := waitForFreeSlots(ctx, slots, r.opts.OrchestrationBatch)
		if n == 0 {
			return
		}
		reconnected := r.reconnected()
		items, err := r.fetchTurns(ctx, n)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			r.outage.failed(r.opts.Logger, "fetch orchestration items", err)
			sleep(ctx, r.opts.backoff(failures), reconnected)
			continue
		}
		r.outage.succeeded(r.opts.Logger)
		failures = 0
		for _, item := range items {
			// A fetched item waits for its slot even at shutdown: turns are
			// not cancelled (they are short, and finishing them saves the
			// next holder a lock timeout).
			slots <- struct{}{}
			r.loops.Go(func() {
				defer func() { <-slots }()
				if item.Cached {
					r.runCachedTimerTurn(context.WithoutCancel(ctx), item)
					return
				}
				r.runOrchestrationItem(context.WithoutCancel(ctx), item)
			})
		}
	}
}

// fetchTurns fetches up to n turns: with a store that caches histories,
// the turns of its due timers built from its cache too
// (provider.FetchRequest.FromCache).
func (r *Dispatcher) fetchTurns(ctx context.Context, n int) ([]*provider.OrchestrationItem, error) {
	return r.p.Fetch(ctx, provider.FetchRequest{Max: n, LockFor: r.opts.OrchestrationLockTimeout,
		PollFor: r.opts.PollTimeout, FromCache: true})
}

// waitForFreeSlots waits until a slot is free and returns how many are free,
// at least 1 and at most limit; 0 when ctx ended. It takes none: the caller takes one per item
// it gets.
func waitForFreeSlots(ctx context.Context, slots chan struct{}, limit int) int {
	select {
	case slots <- struct{}{}:
		<-slots
	case <-ctx.Done():
		return 0
	}
	return max(1, min(limit, cap(slots)-len(slots)))
}

// RunItem runs a fetched item's turn here, as a dispatcher would (a
// client's TerminateNow).
func (r *Dispatcher) RunItem(ctx context.Context, item *provider.OrchestrationItem) {
	r.runOrchestrationItem(ctx, item)
}

// runOrchestrationItem runs the item's turn and commits it, or hands the
// item back. When messages reached the instance while the turn ran and the
// store locks them in the commit, their turn runs next in the same slot.
func (r *Dispatcher) runOrchestrationItem(ctx context.Context, item *provider.OrchestrationItem) {
	for item != nil {
		item = r.runTurnOf(ctx, item)
	}
}

// runTurnOf runs one turn and commits it, or hands the item back; it
// returns the instance's next turn when the commit locked one. The instance
// lock is renewed while the turn runs, so a slow turn is not taken over by
// another dispatcher and counted toward the poison limit.
func (r *Dispatcher) runTurnOf(ctx context.Context, item *provider.OrchestrationItem) (next *provider.OrchestrationItem) {
	r.quiet.forget(item.Instance)
	stop := r.renewOrchestrationLock(ctx, item)
	defer stop()
	log := r.opts.Logger.With("instance", item.Instance, "attempt", item.AttemptCount)
	if item.DecodeError != nil {
		r.retryOrFail(ctx, item, nil, &provider.ErrorDetails{Class: provider.ErrorInfrastructure, Message: item.DecodeError.Error()})
		return nil
	}
	in, v := engine.PrepareTurn(item, time.Now())
	in.StepTimeout = r.opts.StepTimeout
	if r.activitySlots != nil { // a runtime that runs no activities leaves local ones to workers
		in.Local = r.localActivities(item)
	}
	switch v {
	case engine.DropIt:
		r.commit(ctx, item, provider.OrchestrationAck{ExecutionID: item.ExecutionID, OrchestratorItems: in.Replies})
		return nil
	case engine.HandBack:
		r.handBackIncomplete(ctx, item)
		return nil
	}
	if item.AttemptCount > r.opts.MaxAttempts {
		r.failExecution(ctx, item, &in, &provider.ErrorDetails{Class: provider.ErrorInfrastructure, Kind: provider.FailurePoison,
			Attempts: item.AttemptCount, MaxAttempts: r.opts.MaxAttempts, ItemKind: "orchestration",
			Message: "poison message: the turn was attempted " + strconv.Itoa(item.AttemptCount) + " times without completing"})
		return nil
	}
	ack, quiet, err := engine.RunTurn(r.reg, in, r.opts.Logger)
	var nd *engine.NondeterminismError
	switch {
	case errors.As(err, &nd) && r.opts.Nondeterminism == NondeterminismFail:
		log.Error("orchestration is nondeterministic; failing it", "error", err, "class", provider.ErrorConfiguration)
		r.failExecution(ctx, item, &in, engine.DetailsOf(err))
	case errors.As(err, &nd):
		// Temporal's rule: keep the instance, so rolling the code back saves it.
		log.Error("orchestration is nondeterministic; keeping it and retrying with backoff (roll back the code, or set Nondeterminism: NondeterminismFail)",
			"error", err, "class", provider.ErrorConfiguration)
		r.abandonKeeping(ctx, item, engine.DetailsOf(err))
	case errors.Is(err, engine.ErrTurnInterrupted):
		log.Warn("turn interrupted by shutdown while a local activity ran; handing it back")
		if err := r.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true}); err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
			log.Error("hand back failed; the lock will expire", "error", err)
		}
	case err != nil:
		r.retryOrFail(ctx, item, &in, engine.DetailsOf(err))
	default:
		return r.commitAndContinue(ctx, item, ack, quiet)
	}
	return nil
}

// handBackIncomplete abandons an item that lacks the message its turn starts
// from, keeping its messages; the attempt does not count toward the poison
// limit. The delay lets the transaction that held the message finish.
func (r *Dispatcher) handBackIncomplete(ctx context.Context, item *provider.OrchestrationItem) {
	r.opts.Logger.Debug("item lacks its execution's start message; handing it back", "instance", item.Instance)
	err := r.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, Delay: r.opts.RetryBackoff, IgnoreAttempt: true})
	if err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
		r.opts.Logger.Error("hand back failed; the lock will expire", "instance", item.Instance, "error", err)
	}
}

// renewOrchestrationLock extends the item's lock every third of the lock
// timeout until the returned function is called.
func (r *Dispatcher) renewOrchestrationLock(ctx context.Context, item *provider.OrchestrationItem) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(r.opts.OrchestrationLockTimeout / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				err := r.p.RenewOrchestrationItemLock(ctx, provider.RenewRequest{LockToken: item.LockToken, ExtendFor: r.opts.OrchestrationLockTimeout})
				if errors.Is(err, provider.ErrLockNotHeld) {
					return
				}
				if err != nil {
					r.opts.Logger.Warn("renewing the instance lock failed; will retry", "instance", item.Instance, "error", err)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// abandonKeeping hands the item back with a growing backoff without counting
// the attempt toward the poison limit; the store shows cause as the
// instance's LastError until a turn commits.
func (r *Dispatcher) abandonKeeping(ctx context.Context, item *provider.OrchestrationItem, cause *provider.ErrorDetails) {
	streak := r.ndStreak(item.Instance, true)
	err := r.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, Delay: r.opts.backoff(streak), IgnoreAttempt: true, Cause: cause})
	if err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
		r.opts.Logger.Error("abandon failed; the lock will expire", "instance", item.Instance, "error", err)
	}
}

// ndStreak counts an instance's consecutive nondeterministic turns in this
// process (for backoff); a committed turn resets it.
func (r *Dispatcher) ndStreak(instance string, failed bool) int {
	r.ndMu.Lock()
	defer r.ndMu.Unlock()
	if !failed {
		delete(r.ndStreaks, instance)
		return 0
	}
	if r.ndStreaks == nil {
		r.ndStreaks = map[string]int{}
	}
	r.ndStreaks[instance]++
	return r.ndStreaks[instance]
}

// commit commits a turn and releases the instance.
func (r *Dispatcher) commit(ctx context.Context, item *provider.OrchestrationItem, ack provider.OrchestrationAck) {
	r.commitTurn(ctx, item, ack, false, nil)
}

// commitAndContinue commits a turn and returns the instance's next turn
// when the store locked it in the same commit (see ackTurn). quiet is the
// turn's quiet set, noted once it committed.
func (r *Dispatcher) commitAndContinue(ctx context.Context, item *provider.OrchestrationItem, ack provider.OrchestrationAck, quiet *engine.QuietWaits) *provider.OrchestrationItem {
	return r.commitTurn(ctx, item, ack, true, quiet)
}

func (r *Dispatcher) commitTurn(ctx context.Context, item *provider.OrchestrationItem, ack provider.OrchestrationAck, continuing bool, quiet *engine.QuietWaits) *provider.OrchestrationItem {
	next, err := r.ackTurn(ctx, item, ack, continuing, quiet)
	switch {
	case err == nil:
		r.ndStreak(item.Instance, false)
	case errors.Is(err, provider.ErrLockNotHeld):
		r.opts.Logger.Warn("turn discarded: the instance lock was lost (expired or instance deleted)", "instance", item.Instance, "error", err)
	default:
		r.opts.Logger.Error("commit turn failed; retrying", "instance", item.Instance, "error", err, "class", provider.ErrorInfrastructure)
		r.abandon(ctx, item, &provider.ErrorDetails{Class: provider.ErrorInfrastructure, Message: "commit turn: " + err.Error()})
	}
	return next
}

// retryOrFail hands a failing item back with backoff, or fails the execution
// once the poison limit is reached. Configuration problems (an orchestration
// not registered in this process) are retried because another process, or
// the next deployment, may have the code.
func (r *Dispatcher) retryOrFail(ctx context.Context, item *provider.OrchestrationItem, in *engine.TurnInput, d *provider.ErrorDetails) {
	if item.AttemptCount >= r.opts.MaxAttempts {
		r.failExecution(ctx, item, in, d)
		return
	}
	r.opts.Logger.Warn("turn failed; retrying with backoff", "instance", item.Instance, "attempt", item.AttemptCount,
		"class", d.Class, "error", d.Message)
	r.abandon(ctx, item, d)
}

func (r *Dispatcher) abandon(ctx context.Context, item *provider.OrchestrationItem, cause *provider.ErrorDetails) {
	err := r.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, Delay: r.opts.backoff(item.AttemptCount), Cause: cause})
	if err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
		r.opts.Logger.Error("abandon failed; the lock will expire", "instance", item.Instance, "error", err)
	}
}

// failExecution ends the execution as Failed with d, without running its code:
// the code is missing, nondeterministic or its stored state unreadable.
func (r *Dispatcher) failExecution(ctx context.Context, item *provider.OrchestrationItem, in *engine.TurnInput, d *provider.ErrorDetails) {
	r.opts.Logger.Error("failing orchestration", "instance", item.Instance, "class", d.Class, "error", d.Message)
	r.commit(ctx, item, engine.FailedAck(item, in, d))
}
