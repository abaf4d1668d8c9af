package provider

import (
	"context"
	"fmt"
	"time"
)

// Admin is the management side of a store: inspection, repair, deletion
// and pruning. Every store implements it (Provider embeds it).
type Admin interface {
	// ListInstances returns one page of instances, newest first (by
	// creation, then ID): instances and starts still queued (StatusPending),
	// those req's filters keep. The page holds at most req.Limit; its Next
	// continues after it (keyset: a page is never shifted by rows added or
	// deleted meanwhile). An invalid request (ListRequest.Validate) gets
	// ErrInvalidArgument.
	ListInstances(ctx context.Context, req ListRequest) (InstancePage, error)
	// ListExecutions returns an instance's execution IDs in ascending order.
	ListExecutions(ctx context.Context, req InstanceRequest) ([]int64, error)
	// GetInstanceInfo describes an instance; an unknown one gets ErrNotFound.
	GetInstanceInfo(ctx context.Context, req InstanceRequest) (InstanceInfo, error)
	// StartQueued reports whether a StartOrchestration message for the
	// instance is queued and not yet processed: the instance is being
	// started though GetInstanceInfo does not know it yet.
	StartQueued(ctx context.Context, req InstanceRequest) (bool, error)
	// GetExecutionInfo describes one execution; an unknown one gets ErrNotFound.
	GetExecutionInfo(ctx context.Context, req ExecutionRequest) (ExecutionInfo, error)
	// GetSystemMetrics counts instances by status, executions and history
	// events. It must stay cheap however large the store (tools and the
	// operator call it periodically): a store may keep the counts as it
	// writes, and may estimate the executions and events of a large store.
	GetSystemMetrics(ctx context.Context) (SystemMetrics, error)
	// GetQueueDepths counts queued messages.
	GetQueueDepths(ctx context.Context) (QueueDepths, error)
	// GetBacklog counts the ready messages (as QueueDepths counts them) by
	// the orchestration or activity they are for. Its cost grows with the
	// ready messages, not with the store.
	GetBacklog(ctx context.Context) (Backlog, error)
	// ListQueuedActivities returns the instance's activities waiting in the
	// worker queue or leased (oldest first, at most MaxQueuedActivities):
	// what a tool shows of work nobody takes, such as a tag no worker
	// serves. An unknown instance has none.
	ListQueuedActivities(ctx context.Context, req InstanceRequest) ([]QueuedActivity, error)
	// ListChildren returns the direct sub-orchestrations of an instance.
	ListChildren(ctx context.Context, req InstanceRequest) ([]string, error)
	// GetParent returns an instance's parent; ok is false for a root instance.
	// An unknown instance gets ErrNotFound.
	GetParent(ctx context.Context, req InstanceRequest) (parent string, ok bool, err error)
	// GetInstanceTree returns an instance and all its descendants.
	GetInstanceTree(ctx context.Context, req InstanceRequest) (InstanceTree, error)
	// AppendHistory appends events to an existing execution outside a turn
	// (tools and repairs). Duplicate IDs get ErrDuplicateEvent and append
	// nothing.
	AppendHistory(ctx context.Context, req AppendRequest) error
	// EnqueueForOrchestrator adds req.Item to the orchestrator queue of
	// req.Item.Instance, visible after req.Delay, unchecked (tools, repairs
	// and tests; clients use StartInstance and SendToInstance). It never
	// creates the instance row and never waits for the instance's lock.
	EnqueueForOrchestrator(ctx context.Context, req EnqueueRequest) error
	// QueueRewind queues req.Item, a WorkRewind message, for a failed root
	// instance whose current execution is req.Item.ExecutionID-1, checked
	// in the same transaction that queues it, and opens execution
	// req.Item.ExecutionID (Running, no history yet) as the instance's
	// current one: its first turn runs from the message. Otherwise nothing is queued
	// and the error wraps ErrNotFound (no such instance) or
	// ErrNotRewindable (another status or execution, a sub-orchestration,
	// a rewind already queued).
	QueueRewind(ctx context.Context, req RewindRequest) error
	// EnqueueForWorker adds req.Item, an ActivityExecute item, to the worker
	// queue, visible after req.Delay (tools, repairs and tests).
	EnqueueForWorker(ctx context.Context, req EnqueueRequest) error

	// DeleteInstances deletes root instances and all their descendants:
	// instance rows, executions, history, queued messages and locks, all or
	// none, atomically. Without req.Force it refuses (ErrInstanceRunning)
	// when any of them is still running, and refuses a sub-orchestration
	// (ErrInvalidArgument: delete its root). Force deletes a
	// sub-orchestration only once its parent has finished: a running parent
	// waits for it, so that is refused (ErrInstanceRunning). After a forced
	// delete, an in-flight commit of the instance gets ErrLockNotHeld and
	// cannot recreate it. With one instance, an unknown one gets
	// ErrNotFound.
	DeleteInstances(ctx context.Context, req DeleteRequest) (DeleteResult, error)
	// DeleteInstancesBulk deletes terminal root instances matching the filter,
	// with their descendants. Running instances are never selected.
	DeleteInstancesBulk(ctx context.Context, filter DeleteFilter) (DeleteResult, error)
	// PruneExecutions deletes old executions of an instance and their history.
	// The current execution is never pruned.
	PruneExecutions(ctx context.Context, req PruneRequest) (PruneResult, error)
}

// ListRequest asks ListInstances for one page. Zero fields filter nothing.
type ListRequest struct {
	// Status keeps instances whose current execution has it; also
	// StatusPending (a start queued, no turn run yet) and StatusStalled
	// (running, its last turn handed back with a cause: InstanceInfo.LastError).
	Status ExecutionStatus
	// Orchestration keeps instances of this orchestration name.
	Orchestration string
	// IDPrefix keeps instances whose ID starts with it.
	IDPrefix string
	// Instance keeps the one instance with this ID (a queued start's
	// listing tells its orchestration and enqueue time).
	Instance string
	// CreatedAfter and CreatedBefore keep instances created at or after,
	// and before, these times.
	CreatedAfter, CreatedBefore time.Time
	// UpdatedAfter and UpdatedBefore keep instances last changed at or
	// after, and before, these times (a queued start: when it was queued).
	UpdatedAfter, UpdatedBefore time.Time
	// Limit is the page size: 1 to MaxListLimit; 0 means DefaultListLimit.
	Limit int
	// After is the Next of the previous page; "" starts at the newest.
	After string
}

// DefaultListLimit and MaxListLimit bound a ListInstances page.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// InstancePage is one page of ListInstances.
type InstancePage struct {
	Instances []InstanceInfo
	// Next is the cursor of the page after this one; "" when this is the last.
	Next string
}

// RewindRequest is a rewind's message (Admin.QueueRewind).
type RewindRequest struct {
	Item WorkItem
}

// Validate checks that the request is a rewind of an execution after the first.
func (r RewindRequest) Validate() error {
	switch {
	case r.Item.Kind != WorkRewind:
		return fmt.Errorf("%w: a rewind queues a %s message, not %s", ErrInvalidArgument, WorkRewind, r.Item.Kind)
	case r.Item.Instance == "":
		return fmt.Errorf("%w: the rewind names no instance", ErrInvalidArgument)
	case r.Item.ExecutionID < 2:
		return fmt.Errorf("%w: a rewind starts execution 2 or later, not %d", ErrInvalidArgument, r.Item.ExecutionID)
	case len(r.Item.History) == 0 || r.Item.History[0].Kind != EventOrchestrationStarted:
		return fmt.Errorf("%w: a rewind's history starts with OrchestrationStarted", ErrInvalidArgument)
	}
	return nil
}

// InstanceRequest names an instance.
type InstanceRequest struct {
	Instance string
}

// ExecutionRequest names one execution of an instance.
type ExecutionRequest struct {
	Instance string
	// ExecutionID is the execution; for ReadHistory, 0 is the current one.
	ExecutionID int64
}

// AppendRequest appends events to one execution's history.
type AppendRequest struct {
	Instance    string
	ExecutionID int64
	Events      []Event
}

// EnqueueRequest adds one message to a queue.
type EnqueueRequest struct {
	Item WorkItem
	// Delay keeps the message invisible this long; 0: visible at once.
	Delay time.Duration
}

// DeleteRequest names the instances DeleteInstances deletes.
type DeleteRequest struct {
	Instances []string
	// Force deletes running instances too; see Admin.DeleteInstances.
	Force bool
}

// PruneRequest names the instance PruneExecutions prunes, and how.
type PruneRequest struct {
	Instance string
	Options  PruneOptions
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
	TotalInstances int64
	// Running counts the stalled ones too; Stalled, those among them whose
	// last turn was handed back with a cause (InstanceInfo.LastError).
	Running    int64
	Stalled    int64
	Completed  int64
	Failed     int64
	Terminated int64
	// Pending counts queued starts of instances that do not exist yet
	// (not in TotalInstances).
	Pending int64
	// TotalExecutions and TotalEvents are exact on SQLite; PostgreSQL counts
	// tables under 10,000 rows and reads its planner's estimate of larger ones.
	TotalExecutions int64
	TotalEvents     int64
}

// QueueDepths counts queued messages. Orchestrator and Worker count visible
// messages not held under a live lock; Delayed counts messages not yet visible
// (timers, backoff); Locked counts messages held under a live lock.
// OldestOrchestrator and OldestWorker are when the longest-waiting of the
// counted ready messages became visible (zero: none waits): how far behind
// the workers are.
type QueueDepths struct {
	Orchestrator int64
	Worker       int64
	Delayed      int64
	Locked       int64

	OldestOrchestrator time.Time
	OldestWorker       time.Time
}

// ByStatus is the instance counts under the status names metrics label
// them with (running counts the stalled ones; pending is queued starts).
func (m SystemMetrics) ByStatus() map[string]int64 {
	return map[string]int64{"running": m.Running, "stalled": m.Stalled, "pending": m.Pending,
		"completed": m.Completed, "failed": m.Failed, "terminated": m.Terminated}
}

// ByQueue is the depths under the queue names metrics label them with.
func (q QueueDepths) ByQueue() map[string]int64 {
	return map[string]int64{"orchestrator": q.Orchestrator, "worker": q.Worker, "delayed": q.Delayed, "locked": q.Locked}
}

// WaitedAt is how long, at time at, a message that became visible at
// oldest had waited: 0 when none waits (oldest zero) or it is not due yet.
func WaitedAt(at, oldest time.Time) time.Duration {
	if oldest.IsZero() || oldest.After(at) {
		return 0
	}
	return at.Sub(oldest)
}

// Backlog is a store's ready work by what runs it (Admin.GetBacklog): what
// an autoscaler sizes a pool by.
type Backlog struct {
	// Orchestrations are the orchestrator queue's ready messages by their
	// instance's orchestration name; Activities, the worker queue's by
	// activity name. Both are sorted by name.
	Orchestrations []NamedBacklog
	Activities     []NamedBacklog
}

// NamedBacklog is the ready messages of one orchestration or activity.
type NamedBacklog struct {
	Name  string
	Ready int64
	// Oldest is when the longest-waiting of them became visible.
	Oldest time.Time
}

// Add files one row of a store's backlog query: kind is
// "orchestration" or "activity", oldest Unix milliseconds.
func (b *Backlog) Add(kind, name string, ready, oldest int64) {
	row := NamedBacklog{Name: name, Ready: ready, Oldest: msTime(oldest)}
	if kind == "activity" {
		b.Activities = append(b.Activities, row)
		return
	}
	b.Orchestrations = append(b.Orchestrations, row)
}

// msTime is Unix milliseconds as a time, zero for 0.
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// NewQueueDepths builds QueueDepths from counts and the oldest ready
// messages' visibility times in Unix milliseconds (0: none), as stores read them.
func NewQueueDepths(orchestrator, worker, delayed, locked, oldestOrchestrator, oldestWorker int64) QueueDepths {
	return QueueDepths{Orchestrator: orchestrator, Worker: worker, Delayed: delayed, Locked: locked,
		OldestOrchestrator: msTime(oldestOrchestrator), OldestWorker: msTime(oldestWorker)}
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

// MaxQueuedActivities is the most activities ListQueuedActivities returns.
const MaxQueuedActivities = 100

// QueuedActivity is an activity in the worker queue.
type QueuedActivity struct {
	ExecutionID int64
	// ActivityID is the ID of its ActivityScheduled event.
	ActivityID int64
	Name       string
	// Tag routes it (WorkItem.Tag); "" for none.
	Tag string
	// Queued is when it was queued; Attempts counts its fetches.
	Queued   time.Time
	Attempts int
	// Leased is set while a worker holds it.
	Leased bool
}
