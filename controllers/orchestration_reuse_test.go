package controllers_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
)

// An object whose start the store refuses (here its default instance ID
// was taken after the object was created, before its pool existed) reports
// InstanceIDInUse and starts and mirrors nothing; the start used to be
// queued and dropped, and the object mirrored the other instance.
func TestStartRefusedByTheStoreIsReported(t *testing.T) {
	ns := namespace(t)
	o := &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: ns},
		Spec: v1.OrchestrationSpec{WorkerPool: "pool", Orchestration: "Hello", Input: js("mine")}}
	create(t, o)
	waiting := waitFor(t, key(o), "PoolNotFound", conditionIs("StoreReachable", metav1.ConditionFalse, "PoolNotFound"))
	id := ns + "/late/" + string(waiting.UID)

	schema := pgtest.RandomSchema()
	store := pgtest.OpenSchema(t, schema)
	t.Cleanup(func() {
		stores.Close(types.NamespacedName{Namespace: ns, Name: "pool"})
		_ = store.DropSchema(context.Background())
	})
	other := dxruntime.NewClient(store)
	if err := other.Start(t.Context(), id, "Hello", "someone else", dxruntime.StartOwner("a test")); err != nil {
		t.Fatal(err)
	}
	createSecret(t, ns, "pg", pgURL)
	create(t, &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: ns},
		Spec: v1.WorkerPoolSpec{Image: "duroxide/sample-worker:test",
			Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "pg"}, Schema: schema}}})

	refused := waitFor(t, key(o), "InstanceIDInUse", conditionIs("InstanceIDInUse", metav1.ConditionTrue, "InstanceIDInUse"))
	if refused.Status.InstanceID != "" || refused.Status.Phase != v1.PhasePending ||
		!strings.Contains(conditionMessage(refused, "InstanceIDInUse"), "a start queued in the store") {
		t.Fatalf("refused start: status %s", describe(refused))
	}
	wantEvent(t, refused, "InstanceIDInUse")
	if st, err := other.Status(t.Context(), id); err != nil || st.Status != dxruntime.StatusPending {
		t.Fatalf("the other start: %+v, %v; want it still queued", st, err)
	}
}

// spec.idReusePolicy: Fail (the default) leaves an instance in the store
// alone; AllowFinished replaces a finished one but not a running one;
// TerminateRunning, set on the refused object, replaces a running one.
func TestIDReusePolicy(t *testing.T) {
	p := newPool(t)
	if err := p.client.Start(t.Context(), "done", "Hello", "them", dxruntime.StartOwner("a test")); err != nil {
		t.Fatal(err)
	}
	if st, err := p.client.Wait(t.Context(), "done"); err != nil || st.Status != dxruntime.StatusCompleted {
		t.Fatalf("the other instance: %+v, %v", st, err)
	}

	kept := p.orchestration("kept", "Hello", "mine")
	kept.Spec.InstanceID = "done"
	create(t, kept)
	got := waitFor(t, key(kept), "InstanceIDInUse", conditionIs("InstanceIDInUse", metav1.ConditionTrue, "InstanceIDInUse"))
	if msg := conditionMessage(got, "InstanceIDInUse"); !strings.Contains(msg, "Completed, started by a test") {
		t.Fatalf("Fail over a completed instance: %q", msg)
	}
	if got.Spec.IDReusePolicy != v1.IDReuseFail {
		t.Fatalf("spec.idReusePolicy defaults to %q, want Fail", got.Spec.IDReusePolicy)
	}
	if err := k8s.Delete(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	waitGone(t, got)

	reused := p.orchestration("reused", "Hello", "mine")
	reused.Spec.InstanceID = "done"
	reused.Spec.IDReusePolicy = v1.IDReuseAllowFinished
	create(t, reused)
	got = waitFor(t, key(reused), "Completed", phaseIs(v1.PhaseCompleted))
	if got.Status.Output != `"Hello, mine!"` || got.Status.InstanceID != "done" {
		t.Fatalf("AllowFinished over a completed instance: %s", describe(got))
	}
	if owner, err := p.client.Owner(t.Context(), "done"); err != nil || !strings.Contains(owner, string(got.UID)) {
		t.Fatalf("owner of the replaced instance: %q, %v; want this object", owner, err)
	}

	if err := p.client.Start(t.Context(), "busy", "Tally", []string{"never"}, dxruntime.StartOwner("a test")); err != nil {
		t.Fatal(err)
	}
	takeover := p.orchestration("takeover", "Hello", "mine")
	takeover.Spec.InstanceID = "busy"
	takeover.Spec.IDReusePolicy = v1.IDReuseAllowFinished
	create(t, takeover)
	got = waitFor(t, key(takeover), "InstanceIDInUse", conditionIs("InstanceIDInUse", metav1.ConditionTrue, "InstanceIDInUse"))
	if msg := conditionMessage(got, "InstanceIDInUse"); !strings.Contains(msg, "in the store") || !strings.Contains(msg, "idReusePolicy") {
		t.Fatalf("AllowFinished over a running instance: %q", msg)
	}
	change(t, takeover, func() { takeover.Spec.IDReusePolicy = v1.IDReuseTerminateRunning })
	got = waitFor(t, key(takeover), "Completed", phaseIs(v1.PhaseCompleted))
	if got.Status.Output != `"Hello, mine!"` || !conditionIs("InstanceIDInUse", metav1.ConditionFalse, "")(got) {
		t.Fatalf("TerminateRunning over a running instance: %s", describe(got))
	}
}
