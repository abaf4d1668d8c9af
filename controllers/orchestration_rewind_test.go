package controllers_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// A finished Orchestration follows its instance when it is rewound (the
// CLI, the web view or Client.Rewind): its execution and phase move on.
func TestRewoundInstanceIsMirroredAgain(t *testing.T) {
	p := newPool(t)
	o := &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{Name: "nameless", Namespace: p.ns},
		Spec: v1.OrchestrationSpec{WorkerPool: p.name, Orchestration: "Hello", Input: js("")}}
	create(t, o)
	failed := waitFor(t, key(o), "Failed (Greet refuses an empty name)", phaseIs(v1.PhaseFailed))
	if failed.Status.ExecutionID != 1 {
		t.Fatalf("failed at execution %d, want 1", failed.Status.ExecutionID)
	}
	if _, err := p.client.Rewind(t.Context(), failed.Status.InstanceID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, key(o), "execution 2, Failed again", func(o *v1.Orchestration) bool {
		return o.Status.ExecutionID == 2 && o.Status.Phase == v1.PhaseFailed
	})
}
