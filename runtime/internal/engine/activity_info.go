package engine

import "context"

// ActivityInfo describes the activity execution a context belongs to.
type ActivityInfo struct {
	Instance    string
	ExecutionID int64
	// ActivityID is the ID of the ActivityScheduled event: stable across
	// re-deliveries, so it can serve as an idempotency key.
	ActivityID int64
	Name       string
	// Attempt counts deliveries of this item (crashes and abandons included);
	// for a local activity, deliveries of the turn running it.
	Attempt int
	// Local is set when the activity runs inside its orchestration's turn (WithLocal).
	Local bool
	// Tag is the activity's routing tag (WithTag), "" for none.
	Tag string
	// Session is the activity's session (WithSession), "" for none: the
	// key of what this worker keeps for it between calls.
	Session string
	// Worker is the WorkerID of the runtime running it (a WorkerPool pod's name).
	Worker string
}

type activityInfoKey struct{}

// ActivityInfoFrom returns the ActivityInfo of an activity's context.
func ActivityInfoFrom(ctx context.Context) (ActivityInfo, bool) {
	info, ok := ctx.Value(activityInfoKey{}).(ActivityInfo)
	return info, ok
}

// WithActivityInfo returns ctx carrying info, for the activity's code.
func WithActivityInfo(ctx context.Context, info ActivityInfo) context.Context {
	return context.WithValue(ctx, activityInfoKey{}, info)
}
