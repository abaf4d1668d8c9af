package inspect

import (
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Pending is a decision of the current execution nothing has answered yet:
// what a running instance waits on.
type Pending struct {
	Kind string `json:"kind"` // activity, timer, event, child
	Name string `json:"name"`
	// Since is when it was decided; Due, a timer's fire time.
	Since time.Time  `json:"since"`
	Due   *time.Time `json:"due,omitempty"`
	// Instance is a child's instance ID.
	Instance string `json:"instance,omitempty"`
}

// WaitingOn lists the decisions of events that no completion, raised event
// or cancellation answered, in the order they were made.
func WaitingOn(events []provider.Event) []Pending {
	answered := map[int64]bool{}
	raised := map[string]int{}
	for _, e := range events {
		switch {
		case e.Kind == provider.EventExternalRaised:
			raised[e.Name]++
		case e.SourceID != 0:
			answered[e.SourceID] = true
		}
	}
	var open []Pending
	for _, e := range events {
		if answered[e.ID] {
			continue
		}
		w := Pending{Name: e.Name, Since: time.UnixMilli(e.Time).UTC()}
		switch e.Kind {
		case provider.EventActivityScheduled:
			w.Kind = "activity"
		case provider.EventTimerCreated:
			due := time.UnixMilli(e.FireAt).UTC()
			w.Kind, w.Name, w.Due = "timer", TimerPurpose(e), &due
		case provider.EventSubOrchestrationScheduled:
			w.Kind, w.Instance = "child", e.Instance
		case provider.EventExternalSubscribed:
			if raised[e.Name] > 0 {
				raised[e.Name]-- // subscriptions take raised events in order
				continue
			}
			w.Kind = "event"
		default:
			continue
		}
		open = append(open, w)
	}
	return open
}

// Describe says what w is: "activity FlakyCharge for 2s",
// "timer due in 5m0s (…)", "event approval for 1m", "child Sub (instance x) for 3s".
func (w Pending) Describe(now time.Time) string {
	switch w.Kind {
	case "timer":
		return fmt.Sprintf("%s due in %s (%s)", w.Name, ShortDuration(w.Due.Sub(now).Round(time.Second)), w.Due.Format(time.RFC3339))
	case "child":
		return fmt.Sprintf("child %s (instance %s) for %s", w.Name, w.Instance, Age(now.Sub(w.Since)))
	}
	return fmt.Sprintf("%s %s for %s", w.Kind, w.Name, Age(now.Sub(w.Since)))
}
