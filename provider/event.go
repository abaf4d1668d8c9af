package provider

// EventKind names the type of a history event.
type EventKind string

// History event kinds. The runtime writes them; providers store them opaquely.
const (
	EventOrchestrationStarted        EventKind = "OrchestrationStarted"
	EventOrchestrationCompleted      EventKind = "OrchestrationCompleted"
	EventOrchestrationFailed         EventKind = "OrchestrationFailed"
	EventOrchestrationTerminated     EventKind = "OrchestrationTerminated"
	EventOrchestrationContinuedAsNew EventKind = "OrchestrationContinuedAsNew"
	EventActivityScheduled           EventKind = "ActivityScheduled"
	EventActivityCompleted           EventKind = "ActivityCompleted"
	EventActivityFailed              EventKind = "ActivityFailed"
	EventTimerCreated                EventKind = "TimerCreated"
	EventTimerFired                  EventKind = "TimerFired"
	EventExternalSubscribed          EventKind = "ExternalSubscribed"
	EventExternalRaised              EventKind = "ExternalRaised"
	EventSubOrchestrationScheduled   EventKind = "SubOrchestrationScheduled"
	EventSubOrchestrationCompleted   EventKind = "SubOrchestrationCompleted"
	EventSubOrchestrationFailed      EventKind = "SubOrchestrationFailed"
	EventOrchestrationChained        EventKind = "OrchestrationChained"
	EventCustomStatusSet             EventKind = "CustomStatusSet"
)

// Event is one entry of an execution's append-only history.
//
// ID is unique within an execution and orders the history. Completion events
// point at the event that scheduled the work through SourceID. Payloads
// (Input, Output, event data) are JSON documents carried as strings.
type Event struct {
	ID       int64     `json:"id"`
	Kind     EventKind `json:"kind"`
	SourceID int64     `json:"sourceId,omitempty"`
	// Time is the wall clock of the turn that recorded the event, in Unix milliseconds.
	Time int64 `json:"time,omitempty"`
	// Name is the orchestration, activity, external event or child name, by kind.
	Name    string        `json:"name,omitempty"`
	Version string        `json:"version,omitempty"`
	Input   string        `json:"input,omitempty"`
	Output  string        `json:"output,omitempty"`
	Error   *ErrorDetails `json:"error,omitempty"`
	// FireAt is a timer's due time in Unix milliseconds.
	FireAt int64 `json:"fireAt,omitempty"`
	// Instance is the child instance of a sub-orchestration or detached start.
	Instance          string `json:"instance,omitempty"`
	ParentInstance    string `json:"parentInstance,omitempty"`
	ParentExecutionID int64  `json:"parentExecutionId,omitempty"`
	ParentID          int64  `json:"parentId,omitempty"`
	ExecutionID       int64  `json:"executionId,omitempty"`
	Reason            string `json:"reason,omitempty"`
	// Key is an ExternalRaised event's idempotency key (WorkItem.Key).
	Key string `json:"key,omitempty"`
}

// ErrorClass tells who is responsible for a failure, and so what to do about it.
type ErrorClass string

const (
	// ErrorApplication is the orchestration's or activity's own failure.
	ErrorApplication ErrorClass = "application"
	// ErrorInfrastructure is a storage or network fault; retrying may help.
	ErrorInfrastructure ErrorClass = "infrastructure"
	// ErrorConfiguration is a deployment mistake (unregistered name, nondeterminism):
	// retrying will not help until someone changes the code or configuration.
	ErrorConfiguration ErrorClass = "configuration"
)

// ErrorDetails describes a failure recorded in history or carried by a work item.
type ErrorDetails struct {
	Class   ErrorClass `json:"class"`
	Message string     `json:"message"`
}
