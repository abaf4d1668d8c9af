package controllers_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/samples"
)

// Two entries raised together at an Approval, which takes one: the store
// accepts the second while the instance runs, and the final turn leaves it
// unconsumed. Once the instance has finished, the object says which entry
// its history lacks (EventsDelivered=False) instead of calling it delivered.
func TestUnconsumedEventReported(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("approve", "Approval", samples.ApprovalRequest{Item: "x", Timeout: time.Minute})
	create(t, o)
	running := waitFor(t, key(o), "Running", phaseIs(v1.PhaseRunning))
	change(t, running, func() {
		running.Spec.Events = append(running.Spec.Events,
			v1.OrchestrationEvent{Name: "approval", Key: "approval-1", Data: js(samples.Decision{Approved: true, By: "a"})},
			v1.OrchestrationEvent{Name: "approval", Key: "approval-2", Data: js(samples.Decision{Approved: false, By: "b"})})
	})
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	history, err := p.client.History(t.Context(), done.Status.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	var consumed []string
	for _, ev := range history {
		if ev.Kind == provider.EventExternalRaised {
			consumed = append(consumed, strings.TrimPrefix(ev.Key, string(done.UID)+"/"))
		}
	}
	if len(consumed) != 1 || done.Status.Output != `"x: approved by a"` {
		t.Fatalf("history holds events %v, output %s; want approval-1 alone", consumed, done.Status.Output)
	}
	if !conditionIs("EventsDelivered", metav1.ConditionFalse, "InstanceFinished")(done) ||
		!strings.Contains(conditionMessage(done, "EventsDelivered"), "approval-2") ||
		strings.Contains(conditionMessage(done, "EventsDelivered"), "approval-1") {
		t.Fatalf("approval-2 never reached the instance, yet the object says: %s", describe(done))
	}
	wantEvent(t, done, "EventNotDelivered")
}
