package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/controllers"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/runtime"
)

// testHold is a finalizer of the tests' own: it keeps an Orchestration after
// the operator's finalizer ran, so that what waits for it can be seen waiting.
const testHold = "test.duroxide.io/hold"

// A namespace deleted while the operator restarts: the namespace controller
// deletes the pool's Secret, the pool and its Orchestrations in no
// particular order, and the operator has no store client open. The Secret
// (the store's credentials) is held until the pool is gone, which waits for
// its Orchestrations, so their finalizers still reach the store and
// terminate the instances; then the Orchestrations, the pool and the Secret
// go.
func TestNamespaceDeletionHoldsThePoolSecret(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("held", "Tally", []string{"never"})
	o.Finalizers = []string{testHold}
	create(t, o)
	running := waitFor(t, key(o), "Running", phaseIs(v1.PhaseRunning))
	poolKey := types.NamespacedName{Namespace: p.ns, Name: p.name}
	pool := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: "pg"}}

	// The Secret goes first: the order that left instances running.
	if err := k8s.Delete(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	stores.Close(poolKey) // the operator restarted: no store client is open
	if err := k8s.Delete(t.Context(), running); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(t.Context(), pool); err != nil {
		t.Fatal(err)
	}

	waitForInstance(t, p, running.Status.InstanceID, runtime.StatusTerminated, key(running))
	// The finalizer ran; the Orchestration stays (testHold), so the pool and
	// the Secret wait, and the pool says what for.
	held := eventually(t, key(secret), &corev1.Secret{}, "the Secret held", func(s *corev1.Secret) bool {
		return !s.DeletionTimestamp.IsZero()
	}, func(s *corev1.Secret) string { return fmt.Sprintf("finalizers %v", s.Finalizers) })
	if !slices.Contains(held.Finalizers, controllers.SecretFinalizer) {
		t.Fatalf("deleted Secret held without the operator's finalizer: %v", held.Finalizers)
	}
	waiting := waitForPool(t, poolKey, func(wp *v1.WorkerPool) bool {
		c := meta.FindStatusCondition(wp.Status.Conditions, "Ready")
		return c != nil && c.Reason == "Deleting"
	})
	if c := meta.FindStatusCondition(waiting.Status.Conditions, "Ready"); !strings.Contains(c.Message, `Secret "pg"`) {
		t.Errorf("deleting pool's Ready message does not name the Secret it holds: %q", c.Message)
	}

	change(t, running, func() {
		running.Finalizers = slices.DeleteFunc(running.Finalizers, func(f string) bool { return f == testHold })
	})
	waitGone(t, running)
	waitGone(t, pool)
	waitGone(t, secret)
}

// waitForInstance waits up to 60 s for the instance to reach status in the
// store, showing the Orchestration's conditions (what its deletion waits
// for) if it does not.
func waitForInstance(t *testing.T, p *testPool, id string, want runtime.InstanceStatus, orch types.NamespacedName) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := p.client.Status(t.Context(), id)
		if err == nil && st.Status == want {
			return
		}
		if time.Now().After(deadline) {
			o := &v1.Orchestration{}
			_ = k8s.Get(t.Context(), orch, o)
			t.Fatalf("instance %q: %+v, %v after 60s; want %s. Orchestration conditions: %+v", id, st, err, want, o.Status.Conditions)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A Secret shared by several pools is held until the last of them is gone
// or uses another Secret; a Secret no pool uses any more is let go.
func TestSharedSecretHeldUntilItsLastPoolGoes(t *testing.T) {
	ns := namespace(t)
	schema := pgtest.RandomSchema()
	store := pgtest.OpenSchema(t, schema)
	t.Cleanup(func() { _ = store.DropSchema(context.Background()) })
	createSecret(t, ns, "pg", pgURL)
	createSecret(t, ns, "pg2", pgURL)
	pools := map[string]*v1.WorkerPool{}
	for _, name := range []string{"a", "b"} {
		pools[name] = &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1.WorkerPoolSpec{Image: "w:1", Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "pg"}, Schema: schema}}}
		create(t, pools[name])
		t.Cleanup(func() { stores.Close(types.NamespacedName{Namespace: ns, Name: name}) })
	}
	pg := types.NamespacedName{Namespace: ns, Name: "pg"}
	pg2 := types.NamespacedName{Namespace: ns, Name: "pg2"}
	waitForSecret(t, pg, "held", true)

	change(t, pools["a"], func() { pools["a"].Spec.Postgres.SecretRef.Name = "pg2" })
	waitForSecret(t, pg2, "held by pool a, which moved to it", true)
	if err := k8s.Delete(t.Context(), pools["b"]); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pools["b"])
	waitForSecret(t, pg, "let go: no pool uses it any more", false)

	// A deleted Secret that a pool still uses stays until that pool is gone.
	secret2 := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg2"}}
	if err := k8s.Delete(t.Context(), secret2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := k8s.Get(t.Context(), pg2, secret2); err != nil || secret2.DeletionTimestamp.IsZero() {
		t.Fatalf("Secret of a live pool after its deletion: %v, deletion timestamp %v; want it held", err, secret2.DeletionTimestamp)
	}
	if held := waitForEvent(t, ns, "Held"); held.Regarding.Name != "pg2" || !strings.Contains(held.Note, "(a)") {
		t.Errorf("Event on the held Secret: %s %q; want it about pg2, naming pool a", held.Regarding.Name, held.Note)
	}
	if err := k8s.Delete(t.Context(), pools["a"]); err != nil {
		t.Fatal(err)
	}
	waitGone(t, secret2)
	// pg was never deleted: let go, it stays.
	if err := k8s.Get(t.Context(), pg, &corev1.Secret{}); err != nil {
		t.Fatalf("Secret pg after its pools went: %v", err)
	}
}

// waitForSecret waits until the Secret does (or does not) carry the
// operator's finalizer.
func waitForSecret(t *testing.T, k types.NamespacedName, what string, held bool) {
	t.Helper()
	eventually(t, k, &corev1.Secret{}, what, func(s *corev1.Secret) bool {
		return slices.Contains(s.Finalizers, controllers.SecretFinalizer) == held
	}, func(s *corev1.Secret) string { return fmt.Sprintf("finalizers %v", s.Finalizers) })
}
