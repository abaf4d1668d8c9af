package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/internal/inspect"
)

// Timeline geometry, in SVG user units (pixels at 100%).
const (
	labelWidth = 180
	plotWidth  = 820
	axisHeight = 26
	rowHeight  = 22
	barHeight  = 14
	minBar     = 3 // a span of no measurable time stays visible
	maxTicks   = 8
)

// timelineView is a timeline laid out for the page's SVG.
type timelineView struct {
	Width, Height, PlotLeft, PlotRight, AxisY int
	Rows                                      []rowView
	Bars                                      []barView
	Marks                                     []markView
	Ticks                                     []tickView
	Total                                     string
}

type rowView struct {
	Label string
	Y     int // the row's text baseline
}

// barView is a span; Class is its kind and outcome for the style sheet
// ("activity failed"), Title its tooltip, Text what fits inside.
type barView struct {
	X, Y, W, H         int
	Class, Title, Text string
}

type markView struct {
	X            int
	Class, Title string
}

type tickView struct {
	X     int
	Label string
}

// layoutTimeline places t's rows, spans, marks and axis ticks.
func layoutTimeline(t inspect.Timeline) timelineView {
	v := timelineView{Width: labelWidth + plotWidth + 30, PlotLeft: labelWidth, PlotRight: labelWidth + plotWidth, AxisY: axisHeight - 6}
	if t.Start.IsZero() {
		return v
	}
	v.Height = axisHeight + len(t.Rows)*rowHeight + 6
	v.Total = inspect.ShortDuration(t.Duration())
	x := func(at time.Time) int { return xOf(at, t) }
	for i, r := range t.Rows {
		top := axisHeight + i*rowHeight
		v.Rows = append(v.Rows, rowView{Label: rowLabel(r), Y: top + rowHeight/2 + 4})
		for _, s := range r.Spans {
			b := barView{X: x(s.Start), Y: top + (rowHeight-barHeight)/2, H: barHeight,
				Class: s.Kind + " " + s.Outcome, Title: spanTitle(s, t.Start)}
			b.W = max(minBar, x(s.End)-b.X)
			if b.W >= 8*len(s.Label) {
				b.Text = s.Label
			}
			v.Bars = append(v.Bars, b)
		}
	}
	for _, m := range t.Marks {
		v.Marks = append(v.Marks, markView{X: x(m.At), Class: strings.ToLower(string(m.Kind)), Title: markTitle(m, t.Start)})
	}
	v.Ticks = ticks(t)
	return v
}

func xOf(at time.Time, t inspect.Timeline) int {
	d := t.Duration()
	if d <= 0 {
		return labelWidth
	}
	return labelWidth + int(float64(at.Sub(t.Start))/float64(d)*plotWidth)
}

func rowLabel(r inspect.Row) string {
	label := r.Name
	if r.Kind == "child" {
		label = "child " + r.Name
	}
	if len([]rune(label)) > 24 {
		label = string([]rune(label)[:23]) + "…"
	}
	return label
}

// spanTitle is a bar's tooltip: what, when, how long, how it ended.
func spanTitle(s inspect.Span, start time.Time) string {
	title := fmt.Sprintf("%s %s %s: +%s, took %s, %s", s.Kind, s.Name, s.Label,
		inspect.ShortDuration(s.Start.Sub(start)), inspect.ShortDuration(s.End.Sub(s.Start)), s.Outcome)
	if s.Detail != "" {
		title += " — " + s.Detail
	}
	return title
}

func markTitle(m inspect.Mark, start time.Time) string {
	title := fmt.Sprintf("%s %s at +%s", m.Kind, m.Name, inspect.ShortDuration(m.At.Sub(start)))
	if m.Detail != "" {
		title += ": " + m.Detail
	}
	return title
}

// ticks marks the axis every round step (1, 2 or 5 times a power of ten
// of milliseconds) that gives at most maxTicks marks.
func ticks(t inspect.Timeline) []tickView {
	d := t.Duration()
	if d <= 0 {
		return []tickView{{X: labelWidth, Label: "0s"}}
	}
	step := tickStep(d)
	var out []tickView
	for at := time.Duration(0); at <= d; at += step {
		out = append(out, tickView{X: xOf(t.Start.Add(at), t), Label: inspect.ShortDuration(at)})
	}
	return out
}

// tickSteps are the axis steps people read at a glance.
var tickSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// tickStep is the least of tickSteps that divides d into at most maxTicks
// steps; past them, whole days.
func tickStep(d time.Duration) time.Duration {
	for _, step := range tickSteps {
		if d/step <= maxTicks {
			return step
		}
	}
	return (d/maxTicks/(24*time.Hour) + 1) * 24 * time.Hour
}
