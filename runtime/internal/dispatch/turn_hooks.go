package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// intercepted runs a prepared turn through the interceptors and records its
// metrics. body computes and commits the turn on the context the
// interceptors pass on (their span, for example); it returns the status
// committed, or an error when nothing was (the turn handed back, refused or
// its lock lost). Each new decision is shown to the interceptors
// (engine.Scheduled) as the turn records it; the retries among them are
// counted once the turn committed.
func (r *Dispatcher) intercepted(ctx context.Context, item *provider.OrchestrationItem, in *engine.TurnInput,
	body func(context.Context) (provider.ExecutionStatus, error)) error {
	began := time.Now()
	name, version, headers, replayed := in.Execution()
	info := &TurnInfo{Instance: item.Instance, ExecutionID: in.ExecutionID(), Orchestration: name, Version: version,
		Headers: headers, Replayed: replayed, Attempt: max(item.AttemptCount, 1)}
	var retried []string
	chain := interceptors(r.opts.Interceptors)
	err := chain.turn(ctx, info, func(ctx context.Context) error {
		in.Schedule = func(s *engine.Scheduled) {
			chain.schedule(ctx, s)
			if s.Kind == engine.ScheduleActivity && s.Attempt > 1 {
				retried = append(retried, s.Name)
			}
		}
		status, err := body(ctx)
		info.Status = status
		return err
	})
	status := string(info.Status)
	switch {
	case errors.Is(err, ErrTurnDeclined):
		status = "declined"
	case status == "":
		status = "error"
	}
	r.metrics.turnDone(ctx, name, status, time.Since(began))
	if err == nil {
		r.metrics.timersDelivered(ctx, item.Messages, began)
		for _, activity := range retried {
			r.metrics.retried(ctx, activity)
		}
	}
	return err
}

// ErrTurnDeclined is what a turn's interceptors see when a fast path ran
// the turn and did not commit it (the instance changed meanwhile, or the
// turn needs what only the usual path does, such as a local activity): the
// turn runs again on the usual path, with its interceptors again.
var ErrTurnDeclined = errors.New("turn declined by a fast path; it runs again on the usual path")

// declined marks a fast path's turn as not committed, with why.
func declined(why error) error { return fmt.Errorf("%w: %w", ErrTurnDeclined, why) }

// committedStatus is the execution's status after ack committed: an ack
// that leaves it running names no status.
func committedStatus(ack provider.OrchestrationAck) provider.ExecutionStatus {
	if ack.Metadata.Status == "" {
		return provider.StatusRunning
	}
	return ack.Metadata.Status
}
