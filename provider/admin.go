package provider

import (
	"context"
	"time"
)

// Admin is the management side of a store: inspection, deletion and pruning.
type Admin interface {
	// ListInstances returns every instance ID, newest first.
	ListInstances(ctx context.Context) ([]string, error)
	// ListInstancesByStatus returns the IDs of instances whose current execution has status.
	ListInstancesByStatus(ctx context.Context, status ExecutionStatus) ([]string, error)
	// ListExecutions returns an instance's execution IDs in ascending order.
	ListExecutions(ctx context.Context, instance string) ([]int64, error)
	// GetInstanceInfo describes an instance; an unknown one gets ErrNotFound.
	GetInstanceInfo(ctx context.Context, instance string) (InstanceInfo, error)
	// StartQueued reports whether a StartOrchestration message for instance is
	// queued and not yet processed: the instance is being started though
	// GetInstanceInfo does not know it yet.
	StartQueued(ctx context.Context, instance string) (bool, error)
	// GetExecutionInfo describes one execution; an unknown one gets ErrNotFound.
	GetExecutionInfo(ctx context.Context, instance string, executionID int64) (ExecutionInfo, error)
	// GetSystemMetrics counts instances by status, executions and history events.
	GetSystemMetrics(ctx context.Context) (SystemMetrics, error)
	// GetQueueDepths counts queued messages.
	GetQueueDepths(ctx context.Context) (QueueDepths, error)
	// ListChildren returns the direct sub-orchestrations of an instance.
	ListChildren(ctx context.Context, instance string) ([]string, error)
	// GetParent returns an instance's parent; ok is false for a root instance.
	// An unknown instance gets ErrNotFound.
	GetParent(ctx context.Context, instance string) (parent string, ok bool, err error)
	// GetInstanceTree returns an instance and all its descendants.
	GetInstanceTree(ctx context.Context, root string) (InstanceTree, error)

	// DeleteInstance deletes a root instance and all its descendants: instance
	// rows, executions, history, queued messages and locks, atomically. Without
	// force it refuses (ErrInstanceRunning) when any of them is still running,
	// and refuses a sub-orchestration (ErrInvalidArgument: delete its root).
	// Force deletes a sub-orchestration only once its parent has finished: a
	// running parent waits for it, so that is refused (ErrInstanceRunning).
	// After a forced delete, an in-flight ack of the instance gets ErrLockNotHeld
	// and cannot recreate it.
	DeleteInstance(ctx context.Context, instance string, force bool) (DeleteResult, error)
	// DeleteInstances deletes several instances as DeleteInstance does, all or none.
	DeleteInstances(ctx context.Context, instances []string, force bool) (DeleteResult, error)
	// DeleteInstancesBulk deletes terminal root instances matching the filter,
	// with their descendants. Running instances are never selected.
	DeleteInstancesBulk(ctx context.Context, filter DeleteFilter) (DeleteResult, error)
	// PruneExecutions deletes old executions of an instance and their history.
	// The current execution is never pruned.
	PruneExecutions(ctx context.Context, instance string, options PruneOptions) (PruneResult, error)
}

// InstanceInfo describes an instance and its current execution.
type InstanceInfo struct {
	Instance            string
	OrchestrationName   string
	Version             string
	CurrentExecutionID  int64
	Status              ExecutionStatus
	Output              string
	ParentInstance      string
	CustomStatus        *string
	CustomStatusVersion int64
	CreatedAt           time.Time
	UpdatedAt           time.Time
	// LastError says why the instance's last turn was handed back without
	// being committed (AbandonOrchestrationItem's cause) while it waits to be
	// retried; nil once a turn commits.
	LastError *ErrorDetails
}

// ExecutionInfo describes one execution.
type ExecutionInfo struct {
	ExecutionID int64
	Status      ExecutionStatus
	Output      string
	StartedAt   time.Time
	// CompletedAt is zero while the execution runs.
	CompletedAt time.Time
	EventCount  int64
}

// SystemMetrics counts what a store holds.
type SystemMetrics struct {
	TotalInstances  int64
	Running         int64
	Completed       int64
	Failed          int64
	Terminated      int64
	TotalExecutions int64
	TotalEvents     int64
}

// QueueDepths counts queued messages. Orchestrator and Worker count visible
// messages not held under a live lock; Delayed counts messages not yet visible
// (timers, backoff); Locked counts messages held under a live lock.
type QueueDepths struct {
	Orchestrator int64
	Worker       int64
	Delayed      int64
	Locked       int64
}

// InstanceTree is an instance and its descendants, parents before children.
type InstanceTree struct {
	Root      string
	Instances []string
}

// DeleteFilter selects instances for bulk deletion. Conditions combine with AND;
// an empty filter selects every terminal root instance.
type DeleteFilter struct {
	// Instances limits the selection to these IDs when not empty.
	Instances []string
	// CompletedBefore selects instances whose current execution completed before it.
	CompletedBefore time.Time
	// Limit caps how many root instances are deleted (0 = no cap).
	Limit int
}

// DeleteResult counts what a delete removed.
type DeleteResult struct {
	InstancesDeleted  int64
	ExecutionsDeleted int64
	EventsDeleted     int64
	MessagesDeleted   int64
}

// Add accumulates another result into r.
func (r *DeleteResult) Add(o DeleteResult) {
	r.InstancesDeleted += o.InstancesDeleted
	r.ExecutionsDeleted += o.ExecutionsDeleted
	r.EventsDeleted += o.EventsDeleted
	r.MessagesDeleted += o.MessagesDeleted
}

// PruneOptions selects old executions to prune. Set conditions combine with
// AND; with neither set, every execution but the current one is pruned.
type PruneOptions struct {
	// KeepLast keeps this many most recent executions (the current one counts).
	KeepLast int
	// CompletedBefore prunes executions completed before it.
	CompletedBefore time.Time
}

// PruneResult counts what a prune removed.
type PruneResult struct {
	ExecutionsDeleted int64
	EventsDeleted     int64
}
