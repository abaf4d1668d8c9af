package controllers_test

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
)

// Entries are raised by key, not by position: one inserted before the
// others is raised too, and one name can be raised twice under two keys.
func TestEventsRaisedByKey(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("keys", "Tally", []string{"x", "y", "x"})
	o.Spec.Events = []v1.OrchestrationEvent{{Name: "x", Key: "x-1", Data: js("1")}}
	create(t, o)
	got := waitFor(t, key(o), "first event received", func(o *v1.Orchestration) bool {
		return strings.Contains(o.Status.CustomStatus, `"received":1`)
	})
	change(t, got, func() {
		got.Spec.Events = append([]v1.OrchestrationEvent{{Name: "y", Data: js("2")}}, got.Spec.Events...)
		got.Spec.Events = append(got.Spec.Events, v1.OrchestrationEvent{Name: "x", Key: "x-2", Data: js("3")})
	})
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	slices.Sort(done.Status.RaisedEvents)
	if done.Status.Output != `["1","2","3"]` || !slices.Equal(done.Status.RaisedEvents, []string{"x-1", "x-2", "y"}) || done.Status.EventsRaised != 3 {
		t.Fatalf("output %s raised %v (%d)", done.Status.Output, done.Status.RaisedEvents, done.Status.EventsRaised)
	}
}

// An event added after the instance finished is not delivered, and the
// object says so instead of counting it as raised in silence.
func TestEventAfterCompletionReported(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("late", "Hello", "x")
	create(t, o)
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	change(t, done, func() { done.Spec.Events = append(done.Spec.Events, v1.OrchestrationEvent{Name: "too-late"}) })
	got := waitFor(t, key(o), "EventsDelivered=False", conditionIs("EventsDelivered", metav1.ConditionFalse, "InstanceFinished"))
	if msg := conditionMessage(got, "EventsDelivered"); !strings.Contains(msg, "too-late") || got.Status.Reason != "InstanceFinished" {
		t.Fatalf("condition message %q, status reason %q", msg, got.Status.Reason)
	}
	wantEvent(t, o, "EventNotDelivered")
	change(t, got, func() { got.Spec.Events = append(got.Spec.Events, v1.OrchestrationEvent{Name: "later"}) })
	both := waitFor(t, key(o), "both keys reported", func(o *v1.Orchestration) bool {
		return strings.Contains(conditionMessage(o, "EventsDelivered"), "later")
	})
	if msg := conditionMessage(both, "EventsDelivered"); !strings.HasPrefix(msg, "not delivered: too-late, later (") || strings.Count(msg, "(") != 1 {
		t.Fatalf("condition message after two late events: %q", msg)
	}
}

// An instance deleted from the store behind the operator's back: the object
// says it is gone (Failed, InstanceNotFound) rather than Pending forever.
func TestInstanceDeletedFromStore(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("lost", "Tally", []string{"never"})
	create(t, o)
	running := waitFor(t, key(o), "Running", phaseIs(v1.PhaseRunning))
	if _, err := p.client.Delete(t.Context(), running.Status.InstanceID, true); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, key(o), "InstanceNotFound", conditionIs("Failed", metav1.ConditionTrue, "InstanceNotFound"))
	if got.Status.Phase != v1.PhaseFailed || got.Status.Reason != "InstanceNotFound" || !strings.Contains(got.Status.Message, "no longer in the store") {
		t.Fatalf("status %s", describe(got))
	}
	if _, err := p.client.Status(t.Context(), running.Status.InstanceID); err == nil || !strings.Contains(err.Error(), provider.ErrNotFound.Error()) {
		t.Fatalf("the operator brought the instance back: %v", err)
	}
}
