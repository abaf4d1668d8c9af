package engine

import (
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// action is a decision the orchestration made: schedule an activity, a timer,
// a child, a detached start, or subscribe to an event. On replay each action
// must match the scheduling event the history recorded for it.
type action struct {
	kind     provider.EventKind
	name     string
	input    string
	version  string
	instance string
	fireAt   int64
	future   *Future
	// id is the scheduling event's ID once recorded or matched.
	id int64
	// target and reason belong to a CancelRequested decision: what it cancels.
	target *action
	reason string
	// local asks for the activity to run inside the turn (WithLocal);
	// timeout bounds such a run's context. inline is set once the turn runs
	// it here: it has no work item to cancel.
	local   bool
	timeout time.Duration
	inline  bool
	// cancelledAtEnd: the history records its cancellation by the
	// execution's end (cancelOutstanding), met on replay.
	cancelledAtEnd bool
	// attempt is an activity's attempt under its retry policy (0: no policy).
	attempt int
	// headers travel with the work the decision sends (Scheduled.Headers).
	headers map[string]string
	// tag routes an activity to the workers taking it (WithTag); session
	// to the worker owning the session (WithSession).
	tag, session string
}

func (a *action) describe() string {
	switch a.kind {
	case provider.EventTimerCreated:
		return string(a.kind)
	case provider.EventCancelRequested:
		if a.target != nil {
			return fmt.Sprintf("%s of %s (event %d)", a.kind, a.target.describe(), a.target.id)
		}
		return string(a.kind)
	case provider.EventSubOrchestrationScheduled, provider.EventOrchestrationChained:
		return fmt.Sprintf("%s %q (instance %q)", a.kind, a.name, a.instance)
	default:
		return fmt.Sprintf("%s %q", a.kind, a.name)
	}
}

func describeEvent(e provider.Event) string {
	if e.Kind == provider.EventCancelRequested {
		return fmt.Sprintf("%s of event %d", e.Kind, e.SourceID)
	}
	a := action{kind: e.Kind, name: e.Name, instance: e.Instance}
	return a.describe()
}

// matches reports whether the history event records this decision.
func (a *action) matches(e provider.Event) bool {
	if a.kind != e.Kind {
		return false
	}
	switch a.kind {
	case provider.EventTimerCreated:
		return true
	case provider.EventCancelRequested:
		return a.target.id == e.SourceID
	case provider.EventSubOrchestrationScheduled, provider.EventOrchestrationChained:
		return a.name == e.Name && a.instance == e.Instance
	default:
		return a.name == e.Name
	}
}

// event is the history event that records the decision.
func (a *action) event() provider.Event {
	ev := provider.Event{Kind: a.kind, Name: a.name, Input: a.input,
		Version: a.version, Instance: a.instance, FireAt: a.fireAt, Reason: a.reason, Headers: a.headers, Tag: a.tag, Session: a.session}
	if a.target != nil {
		ev.SourceID = a.target.id
	}
	return ev
}

// isDecisionEvent reports whether the event records a decision of the code,
// which replay matches against what the code decides again.
func isDecisionEvent(k provider.EventKind) bool {
	switch k {
	case provider.EventActivityScheduled, provider.EventTimerCreated, provider.EventExternalSubscribed,
		provider.EventSubOrchestrationScheduled, provider.EventOrchestrationChained, provider.EventCancelRequested:
		return true
	}
	return false
}

// completionKind maps a completion message to the event that records it and
// the scheduling event it must answer.
func completionKind(k provider.WorkItemKind) (event, answers provider.EventKind, ok bool) {
	switch k {
	case provider.WorkActivityCompleted:
		return provider.EventActivityCompleted, provider.EventActivityScheduled, true
	case provider.WorkActivityFailed:
		return provider.EventActivityFailed, provider.EventActivityScheduled, true
	case provider.WorkTimerFired:
		return provider.EventTimerFired, provider.EventTimerCreated, true
	case provider.WorkSubOrchCompleted:
		return provider.EventSubOrchestrationCompleted, provider.EventSubOrchestrationScheduled, true
	case provider.WorkSubOrchFailed:
		return provider.EventSubOrchestrationFailed, provider.EventSubOrchestrationScheduled, true
	}
	return "", "", false
}
