package engine

import (
	"errors"
	"sync"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// WithLocal runs the activity inside the orchestration's turn, in the process
// running the turn, instead of queuing it for a worker: its schedule and its
// result are committed together with the turn. That saves the worker queue's
// round trips (a hello-world orchestration commits once instead of three
// times), so use it for short activities.
//
// The turn holds the instance's lock (renewed) while its local activities
// run; those it starts together run concurrently. Delivery is still at least
// once: if the process dies before the turn commits, the turn and its local
// activities run again. With WithRetry, each attempt runs locally, and the
// policy's Timeout bounds the attempt's context. When this process has no
// code for the activity, or the turn already ran MaxLocalActivitiesPerTurn,
// it is queued for a worker as without WithLocal: nothing is lost; so it is
// in a runtime that runs no activities (ActivityConcurrency < 0). Local
// activities run in their turn's slot, not in an activity slot. Replay never
// runs an activity again whichever way it ran.
func WithLocal() ActivityOption {
	return func(a *activityCall) { a.local = true }
}

// LocalRunner runs local activities for a turn. Has reports whether this
// process has the activity's code and takes its tag ("" for none); Run executes an ActivityExecute item and
// returns the completion message a worker would report. Run fails only when
// the turn must stop without committing (shutdown).
type LocalRunner struct {
	Has func(name, tag string) bool
	Run func(item provider.WorkItem, timeout time.Duration) (provider.WorkItem, error)
}

// ErrTurnInterrupted stops a turn whose local activity was cut short by a
// hard shutdown: its result is no result, and the turn is handed back.
var ErrTurnInterrupted = errors.New("turn interrupted by shutdown while a local activity ran")

// runsLocally reports whether a new activity decision runs in this turn.
func (t *turn) runsLocally(a *action) bool {
	return a.local && a.session == "" && t.local != nil && t.localRuns < MaxLocalActivitiesPerTurn && t.local.Has(a.name, a.tag)
}

// queueLocal takes a recorded activity decision for running in this turn.
func (t *turn) queueLocal(a *action) {
	a.inline = true
	t.localRuns++
	t.localQueue = append(t.localQueue, a)
}

// runLocalActivities runs the queued local activities, those decided together
// concurrently, then delivers each result as a completion message arriving in
// this turn would be delivered: recorded, then the code runs on. Replay
// delivers the recorded results the same way, so it sees the same order.
func (t *turn) runLocalActivities() {
	for len(t.localQueue) > 0 && t.fatal == nil {
		wave := t.localQueue
		t.localQueue = nil
		results, err := t.executeLocal(wave)
		if err != nil {
			t.fatal = err
			return
		}
		for _, m := range results {
			if t.finished || t.fatal != nil {
				return // what ended the execution cancelled the rest
			}
			if t.recordCompletion(m) {
				t.step()
			}
		}
	}
}

// executeLocal runs a wave of local activities concurrently and returns their
// completions in decision order.
func (t *turn) executeLocal(wave []*action) ([]provider.WorkItem, error) {
	results := make([]provider.WorkItem, len(wave))
	errs := make([]error, len(wave))
	var wg sync.WaitGroup
	for i, a := range wave {
		item := provider.WorkItem{Kind: provider.WorkActivityExecute, Instance: t.instance, ExecutionID: t.executionID,
			ID: a.id, Name: a.name, Input: a.input, Headers: a.headers, Time: t.now.UnixMilli()}
		wg.Go(func() { results[i], errs[i] = t.local.Run(item, a.timeout) })
	}
	wg.Wait()
	return results, errors.Join(errs...)
}
