package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// localActivities is the runner of local activities for a turn of item in
// this runtime: the activities registered here, run with the runtime's
// hard-shutdown context.
func (r *Dispatcher) localActivities(item *provider.OrchestrationItem) *engine.LocalRunner {
	return &engine.LocalRunner{
		Has: r.hasActivity,
		Run: func(w provider.WorkItem, timeout time.Duration) (provider.WorkItem, error) {
			return r.runLocal(w, item.AttemptCount, timeout)
		},
	}
}

// hasActivity reports whether this runtime has the activity's code and
// takes its tag.
func (r *Dispatcher) hasActivity(name, tag string) bool {
	if !r.opts.ActivityTags.Matches(tag) {
		return false
	}
	_, err := engine.LookupActivity(r.reg, name)
	return err == nil
}

// runLocal executes one local activity. A result cut short by hard shutdown
// is no result: the turn is handed back and the activity runs again.
func (r *Dispatcher) runLocal(w provider.WorkItem, attempt int, timeout time.Duration) (provider.WorkItem, error) {
	fn, err := engine.LookupActivity(r.reg, w.Name)
	if err != nil {
		return *engine.ActivityFailed(w, engine.DetailsOf(err)), nil
	}
	info := engine.ActivityInfo{Instance: w.Instance, ExecutionID: w.ExecutionID, ActivityID: w.ID, Name: w.Name, Attempt: attempt, Local: true,
		Tag: w.Tag, Session: w.Session, Worker: r.opts.WorkerID}
	ctx := engine.WithActivityInfo(r.hardCtx, info)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	began := time.Now()
	out, err := r.callActivity(ctx, fn, w, attempt, true)
	outcome := "completed"
	if err != nil {
		outcome = "failed"
	}
	r.metrics.activityDone(ctx, w.Name, outcome, time.Since(began))
	switch {
	case r.hardCtx.Err() != nil:
		return provider.WorkItem{}, engine.ErrTurnInterrupted
	case err != nil && timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return *engine.ActivityFailed(w, &provider.ErrorDetails{Class: provider.ErrorApplication, Kind: provider.FailureTimeout,
			Message: fmt.Sprintf("attempt %v after %v: %v", engine.ErrTimeout, timeout, err)}), nil
	case err != nil:
		return *engine.ActivityFailed(w, engine.DetailsOf(err)), nil
	}
	return provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: w.Instance, ExecutionID: w.ExecutionID, ID: w.ID, Result: out}, nil
}
