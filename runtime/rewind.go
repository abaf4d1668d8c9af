package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// RewindResult says what Rewind queued.
type RewindResult struct {
	// Execution is the new execution; the failed one keeps its history.
	Execution int64
	// Kept is how many of the failed execution's events the new one starts
	// from (replayed, not run again); Dropped, how many it runs again.
	Kept, Dropped int
	// Step is the failing activity or sub-orchestration the new execution
	// runs again first; "" when the code itself failed (or ToStart).
	Step string
	// Carried counts the events and cancellations received after the cut,
	// which the new execution receives again.
	Carried int
}

type rewindOptions struct{ toStart bool }

// RewindOption configures Rewind.
type RewindOption func(*rewindOptions)

// RewindToStart runs the whole execution again from its input (a retry)
// instead of from before its failing step.
func RewindToStart() RewindOption { return func(o *rewindOptions) { o.toStart = true } }

// Rewind puts a failed instance right by running it again as a new
// execution: one that starts from the failed execution's events before the
// failing step (the activity or sub-orchestration that failed, from the
// first attempt of its retries), so that what completed before it is
// replayed, not run again. It is the tool for a failure whose cause is
// fixed: a dependency back up, a bug fixed in a new worker build (whose
// code must replay the kept events).
//
// The cut moves earlier past any activity, timer or child still open at
// it, so no result the new execution waits for is lost; events and
// cancellations received after it are delivered again. The failed
// execution and its history stay (the instance's executions list both).
// A sub-orchestration's child instances started before the cut are kept;
// the failing one starts again under a new ID.
//
// It fails with provider.ErrNotFound for an unknown instance and
// provider.ErrNotRewindable for one that is not failed, a
// sub-orchestration (rewind its root), or one a rewind is queued for.
func (c *Client) Rewind(ctx context.Context, instanceID string, opts ...RewindOption) (RewindResult, error) {
	var o rewindOptions
	for _, opt := range opts {
		opt(&o)
	}
	info, err := c.p.GetInstanceInfo(ctx, provider.InstanceRequest{Instance: instanceID})
	if errors.Is(err, provider.ErrNotFound) {
		return RewindResult{}, fmt.Errorf("rewind %q: %w", instanceID, provider.ErrNotFound)
	}
	if err != nil {
		return RewindResult{}, fmt.Errorf("rewind %q: %w", instanceID, err)
	}
	if info.Status != provider.StatusFailed {
		return RewindResult{}, fmt.Errorf("rewind %q: %w: it is %s, not Failed", instanceID, provider.ErrNotRewindable, info.Status)
	}
	events, err := c.p.ReadHistory(ctx, provider.ExecutionRequest{Instance: instanceID, ExecutionID: info.CurrentExecutionID})
	if err != nil {
		return RewindResult{}, fmt.Errorf("rewind %q: read history: %w", instanceID, err)
	}
	keep, step, err := engine.RewindPoint(events, o.toStart)
	if err != nil {
		return RewindResult{}, fmt.Errorf("rewind %q: %w: %w", instanceID, provider.ErrNotRewindable, err)
	}
	carry := engine.RewindCarry(events[keep:])
	item := provider.WorkItem{Kind: provider.WorkRewind, Instance: instanceID, ExecutionID: info.CurrentExecutionID + 1,
		Name: info.OrchestrationName, Version: info.Version, History: events[:keep], Carry: carry}
	if err := c.p.QueueRewind(ctx, provider.RewindRequest{Item: item}); err != nil {
		return RewindResult{}, fmt.Errorf("rewind %q: %w", instanceID, err)
	}
	return RewindResult{Execution: item.ExecutionID, Kept: keep, Dropped: len(events) - keep, Step: step, Carried: len(carry)}, nil
}
