package engine

import (
	"maps"

	"github.com/duroxide/duroxide-go/provider"
)

// ScheduleKind says what a new decision sends elsewhere.
type ScheduleKind string

const (
	// ScheduleActivity: an activity attempt (each retry is one).
	ScheduleActivity ScheduleKind = "activity"
	// ScheduleChild: a sub-orchestration the decision waits for.
	ScheduleChild ScheduleKind = "child"
	// ScheduleDetached: an independent instance (StartOrchestration).
	ScheduleDetached ScheduleKind = "detached"
	// ScheduleContinueAsNew: the execution that follows this one.
	ScheduleContinueAsNew ScheduleKind = "continueAsNew"
)

// Scheduled is a new decision that sends work elsewhere, shown to the
// runtime's interceptors before it is recorded. Replayed decisions are not
// shown: their headers are those history recorded.
type Scheduled struct {
	Kind ScheduleKind
	// Instance is the scheduling instance; Target the child's or detached
	// instance's ID (empty for an activity).
	Instance string
	Target   string
	// Name is the activity's or orchestration's name.
	Name string
	// Attempt is an activity's attempt under its retry policy (1 for the first).
	Attempt int
	// Headers are recorded with the decision and travel with its work: they
	// begin as a copy of the execution's start headers (nil when it has
	// none); an interceptor may set or remove keys.
	Headers map[string]string
}

// ScheduleHook is called for each new decision that sends work elsewhere.
type ScheduleHook func(*Scheduled)

// scheduled offers a new decision to the turn's hook and returns the
// headers to record with it: the execution's own when there is no hook.
func (t *turn) scheduled(kind ScheduleKind, target, name string, attempt int) map[string]string {
	if t.schedule == nil {
		return t.headers
	}
	s := &Scheduled{Kind: kind, Instance: t.instance, Target: target, Name: name, Attempt: max(attempt, 1), Headers: maps.Clone(t.headers)}
	t.schedule(s)
	if len(s.Headers) == 0 {
		return nil
	}
	return s.Headers
}

// headersOf is the schedule kind a decision's headers are offered under;
// false for decisions that send nothing elsewhere.
func scheduleKindOf(k provider.EventKind) (ScheduleKind, bool) {
	switch k {
	case provider.EventActivityScheduled:
		return ScheduleActivity, true
	case provider.EventSubOrchestrationScheduled:
		return ScheduleChild, true
	case provider.EventOrchestrationChained:
		return ScheduleDetached, true
	}
	return "", false
}

// Execution describes the execution a prepared turn runs: its
// orchestration, version and start headers, and how many history events
// the turn replays. A new execution's version is "" when its start leaves
// the choice to the registry.
func (in *TurnInput) Execution() (name, version string, headers map[string]string, replayed int) {
	switch {
	case len(in.history) > 0:
		h := in.history[0]
		return h.Name, h.Version, h.Headers, len(in.history)
	case in.start != nil:
		return in.start.Name, in.start.Version, in.start.Headers, 0
	}
	return "", "", nil, 0
}

// Instance is the instance the turn runs.
func (in *TurnInput) Instance() string { return in.instance }

// ExecutionID is the execution the turn runs.
func (in *TurnInput) ExecutionID() int64 { return in.executionID }
