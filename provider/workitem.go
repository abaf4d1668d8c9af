package provider

import "fmt"

// WorkItemKind names the type of a queue message.
type WorkItemKind string

// Work item kinds. ActivityExecute goes to the worker queue; every other kind goes
// to the orchestrator queue of the instance named by WorkItem.Instance.
const (
	WorkStartOrchestration WorkItemKind = "StartOrchestration"
	WorkActivityExecute    WorkItemKind = "ActivityExecute"
	WorkActivityCompleted  WorkItemKind = "ActivityCompleted"
	WorkActivityFailed     WorkItemKind = "ActivityFailed"
	WorkTimerFired         WorkItemKind = "TimerFired"
	WorkExternalRaised     WorkItemKind = "ExternalRaised"
	WorkSubOrchCompleted   WorkItemKind = "SubOrchCompleted"
	WorkSubOrchFailed      WorkItemKind = "SubOrchFailed"
	WorkCancelInstance     WorkItemKind = "CancelInstance"
	WorkContinueAsNew      WorkItemKind = "ContinueAsNew"
	// WorkCancelRequested asks the orchestration to cancel gracefully
	// (Client.Cancel); WorkCancelInstance terminates it.
	WorkCancelRequested WorkItemKind = "CancelRequested"
	// WorkRewind starts execution ExecutionID of a failed instance from
	// History, the failed execution's events up to a safe point before its
	// failing step (Admin.QueueRewind).
	WorkRewind WorkItemKind = "Rewind"
)

var knownWorkItemKinds = map[WorkItemKind]bool{
	WorkStartOrchestration: true, WorkActivityExecute: true, WorkActivityCompleted: true,
	WorkActivityFailed: true, WorkTimerFired: true, WorkExternalRaised: true,
	WorkSubOrchCompleted: true, WorkSubOrchFailed: true, WorkCancelInstance: true,
	WorkContinueAsNew: true, WorkCancelRequested: true, WorkRewind: true,
}

// WorkItem is a message on one of the two queues.
//
// Instance is always the instance the message is for: for a sub-orchestration's
// completion that is the parent, with ExecutionID and ID naming the parent's
// execution and scheduling event. Completions carry the execution ID they were
// scheduled in; the runtime, not the provider, discards stale ones.
type WorkItem struct {
	Kind        WorkItemKind `json:"kind"`
	Instance    string       `json:"instance"`
	ExecutionID int64        `json:"executionId,omitempty"`
	// ID is the scheduling event's ID for activities, timers and child completions.
	ID int64 `json:"id,omitempty"`
	// Name is the orchestration, activity or external event name, by kind.
	Name    string        `json:"name,omitempty"`
	Version string        `json:"version,omitempty"`
	Input   string        `json:"input,omitempty"`
	Result  string        `json:"result,omitempty"`
	Error   *ErrorDetails `json:"error,omitempty"`
	// FireAt is a timer's due time in Unix milliseconds; the message is invisible until then.
	FireAt            int64  `json:"fireAt,omitempty"`
	ParentInstance    string `json:"parentInstance,omitempty"`
	ParentExecutionID int64  `json:"parentExecutionId,omitempty"`
	ParentID          int64  `json:"parentId,omitempty"`
	Reason            string `json:"reason,omitempty"`
	// Key makes an ExternalRaised message idempotent: the runtime records at
	// most one event per key in an execution's history and drops repeats.
	Key string `json:"key,omitempty"`
	// Carry, on a ContinueAsNew, holds the messages the ended execution did not
	// consume (events it recorded but no wait took, and messages fetched after
	// it ended), in order; the new execution applies them first.
	Carry []WorkItem `json:"carry,omitempty"`
	// CustomStatus, on a ContinueAsNew, is the custom status the new execution starts with.
	CustomStatus *string `json:"customStatus,omitempty"`
	// Values, on a ContinueAsNew, are the durable values the new execution
	// starts with.
	Values map[string]string `json:"values,omitempty"`
	// History, on a Rewind, is the events the new execution starts from.
	History []Event `json:"history,omitempty"`
	// Owner, on a StartOrchestration or ContinueAsNew, names who started the
	// instance (for example the Kubernetes object); OrchestrationStarted records it.
	Owner string `json:"owner,omitempty"`
	// Headers, on a StartOrchestration, ContinueAsNew or ActivityExecute, are
	// the headers its event records (Event.Headers).
	Headers Headers `json:"headers,omitempty"`
	// Time is, on an ActivityExecute, when its turn scheduled it (Unix
	// milliseconds): schedule-to-start latency is measured from it.
	Time int64 `json:"time,omitempty"`
	// Tag, on an ActivityExecute, routes it to the workers whose fetches
	// take the tag (TagFilter); "" for any worker taking untagged work.
	Tag string `json:"tag,omitempty"`
	// Session, on an ActivityExecute, binds it to the worker that owns the
	// session (see Sessions); "" for none.
	Session string `json:"session,omitempty"`
}

// ForWorkerQueue reports whether the item belongs on the worker queue.
func (w WorkItem) ForWorkerQueue() bool { return w.Kind == WorkActivityExecute }

// Validate checks the fields every provider relies on for routing.
func (w WorkItem) Validate() error {
	if !knownWorkItemKinds[w.Kind] {
		return fmt.Errorf("work item kind %q is not known", w.Kind)
	}
	if w.Instance == "" {
		return fmt.Errorf("%s work item has no instance", w.Kind)
	}
	if w.Kind == WorkStartOrchestration && w.Name == "" {
		return fmt.Errorf("StartOrchestration for %q has no orchestration name", w.Instance)
	}
	if w.Kind == WorkActivityExecute && w.Name == "" {
		return fmt.Errorf("ActivityExecute for %q has no activity name", w.Instance)
	}
	if w.Session != "" {
		if w.Kind != WorkActivityExecute {
			return fmt.Errorf("%s work item for %q has a session; only activities run in sessions", w.Kind, w.Instance)
		}
		if err := ValidateSessionID(w.Session); err != nil {
			return fmt.Errorf("ActivityExecute %q for %q: %w", w.Name, w.Instance, err)
		}
	}
	if w.Tag != "" {
		if w.Kind != WorkActivityExecute {
			return fmt.Errorf("%s work item for %q has a tag; only activities are routed by tag", w.Kind, w.Instance)
		}
		if err := ValidateTag(w.Tag); err != nil {
			return fmt.Errorf("ActivityExecute %q for %q: %w", w.Name, w.Instance, err)
		}
	}
	return nil
}

// TimerRef identifies a timer an ack deletes from the orchestrator queue of
// the acking instance: the TimerFired message for execution ExecutionID
// answering the TimerCreated event TimerID.
type TimerRef struct {
	ExecutionID int64
	TimerID     int64
}

// ActivityRef identifies a scheduled activity, for cancellation.
type ActivityRef struct {
	Instance    string
	ExecutionID int64
	// ActivityID is the ID of the ActivityScheduled event.
	ActivityID int64
}
