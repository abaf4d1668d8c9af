package controllers_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
)

// keepRetrying keeps an unrunnable instance pending for the whole test.
func keepRetrying(o *dxruntime.Options) { o.MaxAttempts = 1_000_000 }

// While the runtime still retries an orchestration no live worker registers,
// the CR says so instead of a plain "waiting".
func TestPendingSaysNoWorkerRegistersTheOrchestration(t *testing.T) {
	p := newPool(t, keepRetrying)
	unknown := p.orchestration("typo", "Helo", "World")
	create(t, unknown)
	wrongVersion := p.orchestration("future", "Hello", "World")
	wrongVersion.Spec.Version = "9.9.9"
	create(t, wrongVersion)

	for _, c := range []struct {
		o    *v1.Orchestration
		want []string
	}{
		{unknown, []string{`registers orchestration "Helo"`, "Hello", "Approval"}},
		{wrongVersion, []string{`registers orchestration "Hello" version 9.9.9`}},
	} {
		got := waitFor(t, key(c.o), "Running=False OrchestrationNotRegistered",
			conditionIs("Running", metav1.ConditionFalse, "OrchestrationNotRegistered"))
		if got.Status.Phase != v1.PhasePending {
			t.Errorf("%s: phase %s, want Pending", c.o.Name, got.Status.Phase)
		}
		msg := conditionMessage(got, "Running")
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: condition message %q lacks %q", c.o.Name, msg, w)
			}
		}
		wantEvent(t, c.o, "OrchestrationNotRegistered")
	}
}

// A pool with no live worker says so; when workers come, the instance runs.
func TestPendingSaysThePoolHasNoLiveWorkers(t *testing.T) {
	p := newIdlePool(t, namespace(t))
	o := p.orchestration("waiting", "Hello", "World")
	create(t, o)
	got := waitFor(t, key(o), "Running=False NoLiveWorkers", conditionIs("Running", metav1.ConditionFalse, "NoLiveWorkers"))
	if msg := conditionMessage(got, "Running"); got.Status.Phase != v1.PhasePending || !strings.Contains(msg, "no worker of pool pool") {
		t.Errorf("phase %s, message %q", got.Status.Phase, msg)
	}
	wantEvent(t, o, "NoLiveWorkers")

	startWorkers(t, p.store, workerOptions())
	done := waitFor(t, key(o), "Succeeded", conditionIs("Succeeded", metav1.ConditionTrue, "Completed"))
	if done.Status.Output != `"Hello, World!"` {
		t.Errorf("output %s", done.Status.Output)
	}
}
