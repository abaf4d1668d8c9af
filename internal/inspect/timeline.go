package inspect

import (
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Span outcomes.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeCancelled = "cancelled"
	OutcomeOpen      = "open" // nothing answered it yet
)

// Span is a decision on the timeline, from when it was made to what
// answered it: an activity attempt, a timer, a sub-orchestration.
type Span struct {
	Kind  string // activity, timer, child
	Name  string // activity or child name; a timer's purpose
	Label string // "attempt 2", a timer's reason, a child's instance
	Start time.Time
	// End is when it was answered; for an open span, the timeline's end.
	End     time.Time
	Outcome string
	Detail  string
}

// Mark is a moment on the timeline: the execution's start and end, a
// raised event, a cancellation request, a custom status.
type Mark struct {
	Kind   provider.EventKind
	Name   string
	At     time.Time
	Detail string
}

// Row is one line of the timeline: the spans of one name that do not
// overlap (concurrent spans of a name take further rows).
type Row struct {
	Kind, Name string
	Spans      []Span
}

// Timeline is one execution's history laid out in time.
type Timeline struct {
	Start, End time.Time
	Rows       []Row
	Marks      []Mark
}

// Duration is the time the timeline covers.
func (t Timeline) Duration() time.Duration { return t.End.Sub(t.Start) }

// BuildTimeline lays out events (one execution, in order); open spans run
// to now, or to the last event when the execution has ended.
func BuildTimeline(events []provider.Event, now time.Time) Timeline {
	var t Timeline
	if len(events) == 0 {
		return t
	}
	t.Start, t.End = at(events[0].Time), at(events[len(events)-1].Time)
	if !ended(events) && now.After(t.End) {
		t.End = now
	}
	answers := answersByDecision(events)
	attempts := map[string]int{}
	var spans []Span
	for _, e := range events {
		if s, ok := spanOf(e, answers[e.ID], t.End, attempts); ok {
			spans = append(spans, s)
		} else if m, ok := markOf(e); ok {
			t.Marks = append(t.Marks, m)
		}
	}
	t.Rows = packRows(spans)
	return t
}

// answersByDecision maps each decision's event ID to the first event that
// answered it (a completion, a failure, a cancellation).
func answersByDecision(events []provider.Event) map[int64]provider.Event {
	answers := map[int64]provider.Event{}
	for _, e := range events {
		if e.SourceID == 0 || !(IsCompletion(e.Kind) || e.Kind == provider.EventCancelRequested) {
			continue
		}
		if _, seen := answers[e.SourceID]; !seen {
			answers[e.SourceID] = e
		}
	}
	return answers
}

func spanOf(e provider.Event, answer provider.Event, end time.Time, attempts map[string]int) (Span, bool) {
	s := Span{Name: e.Name, Start: at(e.Time), End: end, Outcome: OutcomeOpen}
	switch e.Kind {
	case provider.EventActivityScheduled:
		attempts[e.Name]++
		s.Kind, s.Label = "activity", fmt.Sprintf("#%d", attempts[e.Name])
	case provider.EventTimerCreated:
		s.Kind, s.Name, s.Label = "timer", TimerPurpose(e), e.Reason
		if s.Label == "" {
			s.Label = "fires " + ShortDuration(time.Duration(e.FireAt-e.Time)*time.Millisecond) + " after"
		}
	case provider.EventSubOrchestrationScheduled:
		s.Kind, s.Label = "child", e.Instance
	default:
		return Span{}, false
	}
	if answer.ID != 0 {
		s.End, s.Outcome, s.Detail = at(answer.Time), outcome(answer.Kind), Detail(answer, 200)
	}
	return s, true
}

func outcome(k provider.EventKind) string {
	switch k {
	case provider.EventActivityFailed, provider.EventSubOrchestrationFailed:
		return OutcomeFailed
	case provider.EventCancelRequested:
		return OutcomeCancelled
	}
	return OutcomeCompleted
}

func markOf(e provider.Event) (Mark, bool) {
	switch e.Kind {
	case provider.EventOrchestrationStarted, provider.EventOrchestrationCompleted, provider.EventOrchestrationFailed,
		provider.EventOrchestrationTerminated, provider.EventOrchestrationContinuedAsNew, provider.EventExternalRaised,
		provider.EventOrchestrationCancelRequested, provider.EventCustomStatusSet, provider.EventOrchestrationChained:
		return Mark{Kind: e.Kind, Name: e.Name, At: at(e.Time), Detail: Detail(e, 200)}, true
	}
	return Mark{}, false
}

// packRows gives each kind and name its rows in order of first appearance;
// a span goes on the first of its rows it does not overlap.
func packRows(spans []Span) []Row {
	var rows []Row
	byName := map[string][]int{} // kind/name -> indexes into rows
	for _, s := range spans {
		key := s.Kind + "/" + s.Name
		placed := false
		for _, i := range byName[key] {
			last := rows[i].Spans[len(rows[i].Spans)-1]
			if !s.Start.Before(last.End) {
				rows[i].Spans = append(rows[i].Spans, s)
				placed = true
				break
			}
		}
		if !placed {
			byName[key] = append(byName[key], len(rows))
			rows = append(rows, Row{Kind: s.Kind, Name: s.Name, Spans: []Span{s}})
		}
	}
	return rows
}

// ended reports whether the execution's last event ends it.
func ended(events []provider.Event) bool {
	switch events[len(events)-1].Kind {
	case provider.EventOrchestrationCompleted, provider.EventOrchestrationFailed,
		provider.EventOrchestrationTerminated, provider.EventOrchestrationContinuedAsNew:
		return true
	}
	return false
}

func at(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
