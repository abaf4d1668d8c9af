package inspect

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// The retry sample's shape: three attempts of one activity with two
// backoff timers between them, an event, and a pending child.
func TestBuildTimeline(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC).UnixMilli()
	events := []provider.Event{
		{ID: 1, Kind: provider.EventOrchestrationStarted, Name: "Retry", Time: t0},
		{ID: 2, Kind: provider.EventActivityScheduled, Name: "Charge", Time: t0},
		{ID: 3, Kind: provider.EventActivityFailed, SourceID: 2, Time: t0 + 100, Error: &provider.ErrorDetails{Class: provider.ErrorApplication, Message: "declined"}},
		{ID: 4, Kind: provider.EventTimerCreated, Time: t0 + 100, FireAt: t0 + 1100, Reason: "retry backoff of 1s after attempt 1"},
		{ID: 5, Kind: provider.EventTimerFired, SourceID: 4, Time: t0 + 1100},
		{ID: 6, Kind: provider.EventActivityScheduled, Name: "Charge", Time: t0 + 1100},
		{ID: 7, Kind: provider.EventActivityScheduled, Name: "Charge", Time: t0 + 1150}, // concurrent: a second row
		{ID: 8, Kind: provider.EventActivityCompleted, SourceID: 6, Time: t0 + 1300},
		{ID: 9, Kind: provider.EventExternalRaised, Name: "go", Time: t0 + 1400},
		{ID: 10, Kind: provider.EventSubOrchestrationScheduled, Name: "Sub", Instance: "kid", Time: t0 + 1500},
	}
	now := time.UnixMilli(t0 + 2000).UTC()
	tl := BuildTimeline(events, now)
	if tl.Duration() != 2*time.Second {
		t.Errorf("duration %v, want 2s (a running execution runs to now)", tl.Duration())
	}
	var rows []string
	for _, r := range tl.Rows {
		var spans []string
		for _, s := range r.Spans {
			spans = append(spans, fmt.Sprintf("%s:%s:%d-%d", s.Label, s.Outcome, s.Start.UnixMilli()-t0, s.End.UnixMilli()-t0))
		}
		rows = append(rows, r.Kind+" "+r.Name+" "+strings.Join(spans, ","))
	}
	want := []string{
		"activity Charge #1:failed:0-100,#2:completed:1100-1300",
		"timer retry backoff retry backoff of 1s after attempt 1:completed:100-1100",
		"activity Charge #3:open:1150-2000",
		"child Sub kid:open:1500-2000",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	var marks []string
	for _, m := range tl.Marks {
		marks = append(marks, string(m.Kind)+" "+m.Name)
	}
	if got := strings.Join(marks, "|"); got != "OrchestrationStarted Retry|ExternalRaised go" {
		t.Errorf("marks %s", got)
	}
	if d := tl.Rows[0].Spans[0].Detail; d != "application: declined" {
		t.Errorf("failed attempt's detail %q, want the error", d)
	}
}

// An ended execution's timeline stops at its last event, not at now.
func TestTimelineOfEndedExecution(t *testing.T) {
	events := []provider.Event{
		{ID: 1, Kind: provider.EventOrchestrationStarted, Time: 1000},
		{ID: 2, Kind: provider.EventActivityScheduled, Name: "A", Time: 1000},
		{ID: 3, Kind: provider.EventCancelRequested, SourceID: 2, Time: 1500},
		{ID: 4, Kind: provider.EventOrchestrationCompleted, Time: 1500},
	}
	tl := BuildTimeline(events, time.UnixMilli(99_000))
	if tl.End.UnixMilli() != 1500 {
		t.Errorf("end %d, want 1500", tl.End.UnixMilli())
	}
	if s := tl.Rows[0].Spans[0]; s.Outcome != OutcomeCancelled || s.End.UnixMilli() != 1500 {
		t.Errorf("span %+v, want cancelled at 1500", s)
	}
	if got := BuildTimeline(nil, time.Now()); len(got.Rows) != 0 || !got.Start.IsZero() {
		t.Errorf("empty history: %+v", got)
	}
}
