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
	// EventCancelRequested records that the orchestration gave up on the
	// decision SourceID (a Select loser, Future.Cancel, a cancelled scope),
	// or that its execution ended with that decision still outstanding (just
	// before the end event).
	EventCancelRequested EventKind = "CancelRequested"
	// EventOrchestrationCancelRequested records a graceful cancellation
	// (Client.Cancel) delivered to the orchestration.
	EventOrchestrationCancelRequested EventKind = "OrchestrationCancelRequested"
	// EventValueSet records that the code set its instance's value Name to
	// Input; EventValueCleared that it removed Name; EventValuesCleared
	// that it removed them all. Replay does not match them: the code sets
	// the same values again.
	EventValueSet      EventKind = "ValueSet"
	EventValueCleared  EventKind = "ValueCleared"
	EventValuesCleared EventKind = "ValuesCleared"
)

// Event is one entry of an execution's append-only history.
//
// ID is unique within an execution and orders the history. Completion events
// point at the event that scheduled the work through SourceID. Payloads
// (Input, Output, event data) are JSON documents carried as strings and
// stored as JSON values (see MarshalJSON).
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
	// CustomStatus is, on OrchestrationStarted, the instance's custom status
	// when the execution began (carried over a continue-as-new).
	CustomStatus *string `json:"customStatus,omitempty"`
	// RewoundFrom is, on OrchestrationStarted, the failed execution this one
	// was rewound from (its events up to the cut follow).
	RewoundFrom int64 `json:"rewoundFrom,omitempty"`
	// Owner is, on OrchestrationStarted, who started the instance (WorkItem.Owner).
	Owner string `json:"owner,omitempty"`
	// Carried marks a message the previous execution received but did not
	// consume, carried over a continue-as-new: it follows OrchestrationStarted
	// and was delivered before the code started.
	Carried bool `json:"carried,omitempty"`
	// Headers travel with the work an event sends: on OrchestrationStarted
	// those of the start, on ActivityScheduled, SubOrchestrationScheduled and
	// OrchestrationChained those the runtime's interceptors set (trace
	// context, for example). Replay reads them back; they are no decision.
	Headers Headers `json:"headers,omitempty"`
	// Tag is, on ActivityScheduled, the activity's routing tag (WorkItem.Tag).
	Tag string `json:"tag,omitempty"`
	// Session is, on ActivityScheduled, the activity's session (WorkItem.Session).
	Session string `json:"session,omitempty"`
	// Values is, on OrchestrationStarted, the instance's durable values when
	// the execution began (carried over a continue-as-new).
	Values map[string]string `json:"values,omitempty"`
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

// FailureKind says what kind of failure ErrorDetails describes, so callers can
// branch without matching message text. Empty for an ordinary error returned
// by user code.
type FailureKind string

const (
	// FailurePoison: an item was attempted more than the poison limit.
	FailurePoison FailureKind = "poison"
	// FailureCanceled: the work was cancelled (Select loser, Future.Cancel, Client.Cancel).
	FailureCanceled FailureKind = "cancelled"
	// FailurePanicked: user code panicked.
	FailurePanicked FailureKind = "panicked"
	// FailureNondeterminism: the code no longer matches its history.
	FailureNondeterminism FailureKind = "nondeterminism"
	// FailureTimeout: an activity attempt ran past its RetryPolicy.Timeout.
	FailureTimeout FailureKind = "timeout"
	// FailureLimit: a limit (payload, history, custom status, inbox, carry-forward) was exceeded.
	FailureLimit FailureKind = "limit"
	// FailureTerminated: the instance was terminated.
	FailureTerminated FailureKind = "terminated"
	// FailureBlocked: orchestration code blocked outside the engine past its step deadline.
	FailureBlocked FailureKind = "blocked"
	// FailureAlreadyExists: a sub-orchestration's instance ID was taken.
	FailureAlreadyExists FailureKind = "alreadyExists"
	// FailureUnregistered: an orchestration or activity name (or version) is not registered.
	FailureUnregistered FailureKind = "unregistered"
)

// ErrorDetails describes a failure recorded in history or carried by a work item.
type ErrorDetails struct {
	Class   ErrorClass  `json:"class"`
	Message string      `json:"message"`
	Kind    FailureKind `json:"kind,omitempty"`
	// Attempts and MaxAttempts describe a poison failure; ItemKind says what
	// was poisoned ("orchestration" or "activity").
	Attempts    int    `json:"attempts,omitempty"`
	MaxAttempts int    `json:"maxAttempts,omitempty"`
	ItemKind    string `json:"itemKind,omitempty"`
	// Reason is a cancellation's or termination's reason.
	Reason string `json:"reason,omitempty"`
}

// EndsExecution reports whether an event of kind k is an execution's last:
// completed, failed, terminated or continued as new.
func (k EventKind) EndsExecution() bool {
	switch k {
	case EventOrchestrationCompleted, EventOrchestrationFailed, EventOrchestrationTerminated, EventOrchestrationContinuedAsNew:
		return true
	}
	return false
}
