package controllers_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/runtime"
)

// One object, one run: deleting an Orchestration and applying the same name
// with a new input runs the new input (before, the default instance ID was
// "<namespace>/<name>" and the object mirrored the old run).
func TestReappliedNameStartsANewRun(t *testing.T) {
	p := newPool(t)
	first := p.orchestration("again", "Hello", "first")
	create(t, first)
	done := waitFor(t, key(first), "Completed", phaseIs(v1.PhaseCompleted))
	if done.Status.Output != `"Hello, first!"` {
		t.Fatalf("first run output %s", done.Status.Output)
	}
	if err := k8s.Delete(t.Context(), done); err != nil {
		t.Fatal(err)
	}
	waitGone(t, done)

	second := p.orchestration("again", "Hello", "second")
	create(t, second)
	again := waitFor(t, key(second), "Completed", phaseIs(v1.PhaseCompleted))
	if again.Status.Output != `"Hello, second!"` || again.Status.InstanceID == done.Status.InstanceID {
		t.Fatalf("re-applied name: output %s instance %s (first run's instance %s)", again.Status.Output, again.Status.InstanceID, done.Status.InstanceID)
	}
	owner, err := p.client.Owner(t.Context(), again.Status.InstanceID)
	if err != nil || !strings.Contains(owner, "Orchestration "+p.ns+"/again") || !strings.Contains(owner, string(again.UID)) {
		t.Fatalf("owner recorded on the instance: %q, %v", owner, err)
	}
}

// Two objects naming one spec.instanceID: the first runs it, the second
// says InstanceIDInUse, starts nothing, and its deletion (policy Purge)
// leaves the first one's instance alone. An ID already in the store is
// refused the same way.
func TestExplicitInstanceIDInUse(t *testing.T) {
	p := newPool(t)
	a := p.orchestration("a", "Tally", []string{"go"})
	a.Spec.InstanceID = "shared"
	create(t, a)
	waitFor(t, key(a), "Running", phaseIs(v1.PhaseRunning))

	b := p.orchestration("b", "Tally", []string{"go"})
	b.Spec.InstanceID = "shared"
	b.Spec.DeletionPolicy = v1.DeletionPurge
	create(t, b)
	clash := waitFor(t, key(b), "InstanceIDInUse", conditionIs("InstanceIDInUse", metav1.ConditionTrue, "InstanceIDInUse"))
	if clash.Status.InstanceID != "" || clash.Status.Phase != v1.PhasePending || !strings.Contains(clash.Status.Message, "Orchestration a") ||
		clash.Status.Reason != "InstanceIDInUse" {
		t.Fatalf("clash status %s", describe(clash))
	}
	wantEvent(t, b, "InstanceIDInUse")
	if err := k8s.Delete(t.Context(), clash); err != nil {
		t.Fatal(err)
	}
	waitGone(t, clash)
	if st, err := p.client.Status(t.Context(), "shared"); err != nil || st.Status != runtime.StatusRunning {
		t.Fatalf("a's instance after b's deletion (Purge): %+v, %v; want it still running", st, err)
	}

	if err := p.client.Start(t.Context(), "foreign", "Tally", []string{"go"}, runtime.StartOwner("a test")); err != nil {
		t.Fatal(err)
	}
	c := p.orchestration("c", "Tally", []string{"go"})
	c.Spec.InstanceID = "foreign"
	create(t, c)
	got := waitFor(t, key(c), "InstanceIDInUse", conditionIs("InstanceIDInUse", metav1.ConditionTrue, "InstanceIDInUse"))
	if msg := conditionMessage(got, "InstanceIDInUse"); !strings.Contains(msg, "in the store") {
		t.Fatalf("store clash message %q", msg)
	}
}
