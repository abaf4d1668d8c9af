package dispatch

import (
	"context"
	"errors"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// StartEagerly starts item under reuse and runs its first turn here when it
// can. It reports false, having done nothing, when the start must be queued
// plainly. On error nothing was queued. A direct start needs no reuse check:
// the store commits it only for an ID nothing holds.
func (r *Dispatcher) StartEagerly(ctx context.Context, item provider.WorkItem, reuse provider.IDReusePolicy) (bool, error) {
	if _, _, err := engine.LookupOrchestration(r.reg, item.Name, item.Version); err != nil {
		return false, nil
	}
	if !r.holdLoop() {
		return false, nil
	}
	// The caller's goroutine computes the turn: no turn slot is taken, so a
	// start under load commits its first turn instead of queuing.
	switch res, err := r.startDirectly(ctx, item); {
	case res == directUnsupported:
	case res == directCommitted || err != nil:
		r.loops.Done()
		return true, err
	case res == directRefused:
		r.loops.Done()
		return false, nil
	}
	if tryAcquire(r.turnSlots, 1) == 0 {
		r.loops.Done()
		return false, nil
	}
	turn, err := r.p.StartInstance(ctx, provider.StartRequest{Start: item, Reuse: reuse, LockFor: r.opts.OrchestrationLockTimeout})
	if turn == nil {
		<-r.turnSlots
		r.loops.Done()
		return true, err
	}
	go func() {
		defer r.loops.Done()
		defer func() { <-r.turnSlots }()
		r.runOrchestrationItem(context.WithoutCancel(r.fetchCtx), turn)
	}()
	return true, nil
}

type directResult int

const (
	directCommitted directResult = iota
	// directRefused: the instance exists, is locked or has messages queued.
	directRefused
	// directNotHere: the first turn runs local activities (Start does not
	// wait for them) or cannot be computed here; a turn slot should run it.
	directNotHere
	// directUnsupported: the store has no direct start
	// (provider.ErrUnsupported); a turn slot should run the first turn.
	directUnsupported
)

// errLocalAtStart stops a first turn computed inside Start at its first local
// activity: Start does not run user activities before it returns.
var errLocalAtStart = errors.New("the first turn runs a local activity")

// startDirectly computes the new instance's first turn here and commits it as
// the start. Unless it reports directCommitted, nothing was committed.
func (r *Dispatcher) startDirectly(ctx context.Context, start provider.WorkItem) (directResult, error) {
	if r.noDirectStart.Load() {
		return directUnsupported, nil
	}
	item := &provider.OrchestrationItem{Instance: start.Instance, ExecutionID: 1, AttemptCount: 1,
		Messages: []provider.WorkItem{start}, OrchestrationName: start.Name, Version: start.Version}
	in, v := engine.PrepareTurn(item, time.Now())
	if v != engine.RunIt {
		return directNotHere, nil
	}
	in.StepTimeout = r.opts.StepTimeout
	if r.activitySlots != nil {
		in.Local = &engine.LocalRunner{
			Has: r.hasActivity,
			Run: func(provider.WorkItem, time.Duration) (provider.WorkItem, error) {
				return provider.WorkItem{}, errLocalAtStart
			},
		}
	}
	res := directNotHere
	err := r.intercepted(ctx, item, &in, func(ctx context.Context) (provider.ExecutionStatus, error) {
		ack, quiet, err := engine.RunTurn(r.reg, in, r.opts.Logger)
		if err != nil {
			if !errors.Is(err, errLocalAtStart) {
				r.opts.Logger.Debug("first turn not computed at start; a dispatcher will run it", "instance", start.Instance, "error", err)
			}
			return "", declined(err)
		}
		created := false
		err = r.commitLeasing(ack, func(lease []int) ([]*provider.WorkItemLease, error) {
			c, err := r.p.Commit(ctx, provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnNew, Instance: start.Instance,
				Ack: ack, Lease: lease, LeaseFor: r.opts.ActivityLockTimeout}})
			created = c.Created
			if err == nil && created {
				r.quiet.note(start.Instance, ack, quiet)
			}
			return c.Leases, err
		})
		switch {
		case errors.Is(err, provider.ErrUnsupported):
			r.noDirectStart.Store(true)
			res = directUnsupported
			return "", declined(err)
		case err != nil:
			res = directCommitted
			return "", err
		case created:
			res = directCommitted
			return committedStatus(ack), nil
		}
		res = directRefused
		return "", declined(errDirectRefused)
	})
	if res != directCommitted {
		err = nil
	}
	return res, err
}

// errDirectRefused: the store did not create the instance for a direct
// start (its ID is held, locked, or has messages queued).
var errDirectRefused = errors.New("the instance ID is held")

// holdLoop counts one more running loop for Shutdown to wait for, unless the
// runtime is not running: Shutdown stops fetching under the same mutex, so a
// loop counted here is never missed by its wait.
func (r *Dispatcher) holdLoop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.accepting() {
		return false
	}
	r.loops.Add(1)
	return true
}
