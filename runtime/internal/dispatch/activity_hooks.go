package dispatch

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// callActivity runs one attempt of fn through the interceptors.
func (r *Dispatcher) callActivity(ctx context.Context, fn engine.ActivityFunc, item provider.WorkItem, attempt int, local bool) (string, error) {
	if len(r.opts.Interceptors) == 0 {
		return engine.CallActivity(ctx, fn, item)
	}
	call := &ActivityCall{Instance: item.Instance, ExecutionID: item.ExecutionID, ActivityID: item.ID, Name: item.Name,
		Attempt: attempt, Local: local, Headers: item.Headers}
	var out string
	err := interceptors(r.opts.Interceptors).activity(ctx, call, func(ctx context.Context) error {
		var err error
		out, err = engine.CallActivity(ctx, fn, item)
		return err
	})
	return out, err
}

// outcome names how an attempt ended, for the metrics.
func (res activityResult) outcomeName() string {
	switch res.outcome {
	case activityCancelled:
		return "cancelled"
	case activityLost:
		return "lost"
	case activityInterrupted:
		return "interrupted"
	}
	if res.err != nil {
		return "failed"
	}
	return "completed"
}
