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
// as there are free slots, and runs each turn on a goroutine of the workers (workers.go),
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
			r.workers.Go(func() {
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
		PollFor: r.opts.PollTimeout, FromCache: true, Capability: r.capability})
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
	if item.DecodeError != nil {
		_, _ = r.retryOrFail(ctx, item, nil, &provider.ErrorDetails{Class: provider.ErrorInfrastructure, Message: item.DecodeError.Error()})
		return nil
	}
	in, v := engine.PrepareTurn(item, time.Now())
	in.StepTimeout = r.opts.StepTimeout
	if r.activitySlots != nil { // a runtime that runs no activities leaves local ones to workers
		in.Local = r.localActivities(item)
	}
	switch v {
	case engine.DropIt:
		_, _ = r.commit(ctx, item, provider.OrchestrationAck{ExecutionID: item.ExecutionID, OrchestratorItems: in.Replies})
		return nil
	case engine.HandBack:
		r.handBackIncomplete(ctx, item)
		return nil
	}
	_ = r.intercepted(ctx, item, &in, func(ctx context.Context) (status provider.ExecutionStatus, err error) {
		next, status, err = r.decideTurn(ctx, item, &in)
		return status, err
	})
	return next
}

// decideTurn runs a prepared turn and commits it, fails the execution, or
// hands the item back. It returns the status committed, or why nothing was.
func (r *Dispatcher) decideTurn(ctx context.Context, item *provider.OrchestrationItem, in *engine.TurnInput) (*provider.OrchestrationItem, provider.ExecutionStatus, error) {
	log := r.opts.Logger.With("instance", item.Instance, "attempt", item.AttemptCount)
	if item.AttemptCount > r.opts.MaxAttempts {
		r.metrics.poisoned(ctx, "orchestration")
		status, err := r.failExecution(ctx, item, in, &provider.ErrorDetails{Class: provider.ErrorInfrastructure, Kind: provider.FailurePoison,
			Attempts: item.AttemptCount, MaxAttempts: r.opts.MaxAttempts, ItemKind: "orchestration",
			Message: "poison message: the turn was attempted " + strconv.Itoa(item.AttemptCount) + " times without completing"})
		return nil, status, err
	}
	ack, quiet, err := engine.RunTurn(r.reg, *in, r.opts.Logger)
	var nd *engine.NondeterminismError
	if errors.As(err, &nd) {
		name, _, _, _ := in.Execution()
		r.metrics.nondeterministic(ctx, name)
	}
	switch {
	case errors.As(err, &nd) && r.opts.Nondeterminism == NondeterminismFail:
		log.Error("orchestration is nondeterministic; failing it", "error", err, "class", provider.ErrorConfiguration)
		status, err := r.failExecution(ctx, item, in, engine.DetailsOf(err))
		return nil, status, err
	case errors.As(err, &nd):
		// Temporal's rule: keep the instance, so rolling the code back saves it.
		log.Error("orchestration is nondeterministic; keeping it and retrying with backoff (roll back the code, or set Nondeterminism: NondeterminismFail)",
			"error", err, "class", provider.ErrorConfiguration)
		r.abandonKeeping(ctx, item, engine.DetailsOf(err))
		return nil, "", err
	case errors.Is(err, engine.ErrTurnInterrupted):
		log.Warn("turn interrupted by shutdown while a local activity ran; handing it back")
		if err := r.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true}); err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
			log.Error("hand back failed; the lock will expire", "error", err)
		}
		return nil, "", err
	case err != nil && engine.DetailsOf(err).Kind == provider.FailureUnregistered:
		r.waitForCode(ctx, item, engine.DetailsOf(err))
		return nil, "", err
	case err != nil:
		status, ferr := r.retryOrFail(ctx, item, in, engine.DetailsOf(err))
		if status != "" {
			return nil, status, ferr
		}
		return nil, "", err
	}
	next, err := r.commitAndContinue(ctx, item, ack, quiet)
	if err != nil {
		return nil, "", err
	}
	return next, committedStatus(ack), nil
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
	r.metrics.stalled(ctx, "orchestration", cause.Class)
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

// commit commits a turn and releases the instance; it returns the status
// committed.
func (r *Dispatcher) commit(ctx context.Context, item *provider.OrchestrationItem, ack provider.OrchestrationAck) (provider.ExecutionStatus, error) {
	if _, err := r.commitTurn(ctx, item, ack, false, nil); err != nil {
		return "", err
	}
	return committedStatus(ack), nil
}

// commitAndContinue commits a turn and returns the instance's next turn
// when the store locked it in the same commit (see ackTurn). quiet is the
// turn's quiet set, noted once it committed.
func (r *Dispatcher) commitAndContinue(ctx context.Context, item *provider.OrchestrationItem, ack provider.OrchestrationAck, quiet *engine.QuietWaits) (*provider.OrchestrationItem, error) {
	return r.commitTurn(ctx, item, ack, true, quiet)
}

// commitTurn commits a turn, or hands the item back when the store failed.
func (r *Dispatcher) commitTurn(ctx context.Context, item *provider.OrchestrationItem, ack provider.OrchestrationAck, continuing bool, quiet *engine.QuietWaits) (*provider.OrchestrationItem, error) {
	next, err := r.ackTurn(ctx, item, ack, continuing, quiet)
	switch {
	case err == nil:
		r.ndStreak(item.Instance, false)
	case errors.Is(err, provider.ErrLockNotHeld):
		r.metrics.lockLost(ctx, "orchestration")
		r.opts.Logger.Warn("turn discarded: the instance lock was lost (expired or instance deleted)", "instance", item.Instance, "error", err)
	default:
		r.opts.Logger.Error("commit turn failed; retrying", "instance", item.Instance, "error", err, "class", provider.ErrorInfrastructure)
		r.abandon(ctx, item, &provider.ErrorDetails{Class: provider.ErrorInfrastructure, Message: "commit turn: " + err.Error()})
	}
	return next, err
}

// retryOrFail hands a failing item back with backoff, or fails the execution
// once the poison limit is reached (it then returns the status committed).
func (r *Dispatcher) retryOrFail(ctx context.Context, item *provider.OrchestrationItem, in *engine.TurnInput, d *provider.ErrorDetails) (provider.ExecutionStatus, error) {
	if item.AttemptCount >= r.opts.MaxAttempts {
		r.metrics.poisoned(ctx, "orchestration")
		return r.failExecution(ctx, item, in, d)
	}
	r.opts.Logger.Warn("turn failed; retrying with backoff", "instance", item.Instance, "attempt", item.AttemptCount,
		"class", d.Class, "error", d.Message)
	r.abandon(ctx, item, d)
	return "", nil
}

func (r *Dispatcher) abandon(ctx context.Context, item *provider.OrchestrationItem, cause *provider.ErrorDetails) {
	r.metrics.stalled(ctx, "orchestration", cause.Class)
	err := r.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, Delay: r.opts.backoff(item.AttemptCount), Cause: cause})
	if err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
		r.opts.Logger.Error("abandon failed; the lock will expire", "instance", item.Instance, "error", err)
	}
}

// failExecution ends the execution as Failed with d, without running its code:
// the code is missing, nondeterministic or its stored state unreadable.
func (r *Dispatcher) failExecution(ctx context.Context, item *provider.OrchestrationItem, in *engine.TurnInput, d *provider.ErrorDetails) (provider.ExecutionStatus, error) {
	r.opts.Logger.Error("failing orchestration", "instance", item.Instance, "class", d.Class, "error", d.Message)
	return r.commit(ctx, item, engine.FailedAck(item, in, d))
}
