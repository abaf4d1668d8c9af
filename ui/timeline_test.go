package ui

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/internal/inspect"
)

func TestTickStep(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{
		5 * time.Millisecond:   time.Millisecond,
		156 * time.Millisecond: 20 * time.Millisecond,
		402 * time.Millisecond: 50 * time.Millisecond,
		90 * time.Second:       15 * time.Second,
		30 * 24 * time.Hour:    4 * 24 * time.Hour,
		3 * time.Second:        500 * time.Millisecond,
		time.Hour:              10 * time.Minute,
	} {
		if got := tickStep(d); got != want {
			t.Errorf("tickStep(%v) = %v, want %v", d, got, want)
		}
	}
}

// Spans map onto the plot proportionally; a span of no time stays visible;
// labels go inside bars they fit in.
func TestLayoutTimeline(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	tl := inspect.Timeline{Start: t0, End: t0.Add(time.Second), Rows: []inspect.Row{
		{Kind: "activity", Name: "Charge", Spans: []inspect.Span{
			{Kind: "activity", Label: "#1", Start: t0, End: t0.Add(500 * time.Millisecond), Outcome: inspect.OutcomeFailed},
			{Kind: "activity", Label: "#2", Start: t0.Add(time.Second), End: t0.Add(time.Second), Outcome: inspect.OutcomeCompleted},
		}},
		{Kind: "child", Name: "Sub", Spans: []inspect.Span{{Kind: "child", Label: "kid", Start: t0, End: t0.Add(time.Second), Outcome: inspect.OutcomeOpen}}},
	}, Marks: []inspect.Mark{{Kind: "ExternalRaised", Name: "go", At: t0.Add(250 * time.Millisecond)}}}
	v := layoutTimeline(tl)
	if len(v.Bars) != 3 || len(v.Rows) != 2 || v.Rows[1].Label != "child Sub" {
		t.Fatalf("layout %+v", v)
	}
	half, last, whole := v.Bars[0], v.Bars[1], v.Bars[2]
	if half.X != labelWidth || half.W != plotWidth/2 || half.Class != "activity failed" || half.Text != "#1" {
		t.Errorf("first attempt %+v, want the plot's left half, labelled", half)
	}
	if last.X != labelWidth+plotWidth || last.W != minBar {
		t.Errorf("instant attempt %+v, want %d wide at the plot's end", last, minBar)
	}
	if whole.Y <= half.Y || whole.W != plotWidth {
		t.Errorf("child %+v, want the second row across the plot", whole)
	}
	if m := v.Marks[0]; m.X != labelWidth+plotWidth/4 || m.Class != "externalraised" {
		t.Errorf("mark %+v, want a quarter in", m)
	}
	if n := len(v.Ticks); n < 2 || n > maxTicks+1 || v.Ticks[0].Label != "0s" {
		t.Errorf("ticks %+v", v.Ticks)
	}
	if empty := layoutTimeline(inspect.Timeline{}); len(empty.Bars) != 0 || empty.Height != 0 {
		t.Errorf("empty timeline %+v", empty)
	}
}
