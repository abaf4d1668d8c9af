package controllers_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
)

// A running instance whose code no longer matches its history is Stalled:
// phase, condition (reason and message), status summary and a Warning
// Event; once the code matches again it is Running, Stalled False.
func TestStalledInstanceIsShown(t *testing.T) {
	ns := namespace(t)
	newPoolIn(t, ns, func(o *dxruntime.Options) { o.MaxAttempts = 1000; o.RetryBackoff = 100 * time.Millisecond })
	o := &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{Name: "drift", Namespace: ns},
		Spec: v1.OrchestrationSpec{WorkerPool: "pool", Orchestration: "Drift", Input: js("")}}
	create(t, o)
	running := waitFor(t, key(o), "Running, Stalled False", func(o *v1.Orchestration) bool {
		return o.Status.Phase == v1.PhaseRunning && conditionIs("Stalled", metav1.ConditionFalse, "Progressing")(o)
	})
	drifted.Store(true)
	t.Cleanup(func() { drifted.Store(false) })
	change(t, running, func() { running.Spec.Events = []v1.OrchestrationEvent{{Name: "nudge"}} })
	stalled := waitFor(t, key(o), "Stalled", phaseIs(v1.PhaseStalled))
	if !conditionIs("Stalled", metav1.ConditionTrue, "Nondeterminism")(stalled) || conditionMessage(stalled, "Stalled") == "" {
		t.Fatalf("Stalled condition; status %s", describe(stalled))
	}
	if stalled.Status.Reason != "Nondeterminism" || stalled.Status.Message == "" {
		t.Errorf("status summary %q %q, want the stall's reason and message", stalled.Status.Reason, stalled.Status.Message)
	}
	wantEvent(t, o, "Stalled")
	drifted.Store(false)
	waitFor(t, key(o), "Running again, Stalled False", func(o *v1.Orchestration) bool {
		return o.Status.Phase == v1.PhaseRunning && conditionIs("Stalled", metav1.ConditionFalse, "Progressing")(o)
	})
}
