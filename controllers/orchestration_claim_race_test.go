package controllers_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/controllers"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
)

// Pairs of objects created at the same instant name one spec.instanceID
// each: one claim wins before anything starts. The object that mirrors the
// ID is the one recorded as the instance's owner and ran its own input; the
// other reports InstanceIDInUse and holds neither ID nor input digest.
func TestRacingClaimsOfOneInstanceID(t *testing.T) {
	p := newPool(t)
	const pairs = 10
	var wg sync.WaitGroup
	for i := range pairs {
		for _, side := range []string{"a", "b"} {
			o := p.orchestration(fmt.Sprintf("%s-%02d", side, i), "Hello", side)
			o.Spec.InstanceID = fmt.Sprintf("race-%02d", i)
			wg.Go(func() { create(t, o) })
		}
	}
	wg.Wait()
	for i := range pairs {
		checkOneWinner(t, p, fmt.Sprintf("race-%02d", i), fmt.Sprintf("a-%02d", i), fmt.Sprintf("b-%02d", i))
	}
}

// checkOneWinner waits until one of the two objects has completed id and
// the other reports InstanceIDInUse, and checks the winner owns the run.
func checkOneWinner(t *testing.T, p *testPool, id string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		objs := make([]*v1.Orchestration, len(names))
		for i, name := range names {
			objs[i] = &v1.Orchestration{}
			if err := k8s.Get(t.Context(), key(p.orchestration(name, "", nil)), objs[i]); err != nil {
				t.Fatal(err)
			}
		}
		winner, loser := objs[0], objs[1]
		if loser.Status.Phase == v1.PhaseCompleted {
			winner, loser = loser, winner
		}
		inUse := conditionIs("InstanceIDInUse", metav1.ConditionTrue, "InstanceIDInUse")
		if winner.Status.Phase == v1.PhaseCompleted && inUse(loser) && loser.Status.Phase != v1.PhaseCompleted {
			owner, err := p.client.Owner(t.Context(), id)
			side := winner.Name[:1]
			if err != nil || !strings.Contains(owner, string(winner.UID)) || winner.Status.InstanceID != id ||
				winner.Status.Output != fmt.Sprintf(`"Hello, %s!"`, side) || loser.Status.InstanceID != "" || loser.Status.InputDigest != "" {
				t.Errorf("%s: owner %q (%v); winner %s %s; loser %s %s", id, owner, err, winner.Name, describe(winner), loser.Name, describe(loser))
			}
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: no single winner: %s %s; %s %s", id, objs[0].Name, describe(objs[0]), objs[1].Name, describe(objs[1]))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The race's worst order, set up step by step: the younger object claimed
// the ID and started its instance before the older one's claim was seen,
// and the older one claimed it too. The object the store records as the
// instance's owner keeps it and mirrors its own run; the older one, whose
// start the store refuses, reports InstanceIDInUse.
func TestStartedClaimBeatsAnOlderClaim(t *testing.T) {
	ns := namespace(t)
	p := &testPool{ns: ns, name: "pool", schema: pgtest.RandomSchema()}
	older := p.orchestration("a-older", "Hello", "a")
	older.Spec.InstanceID = "contested"
	create(t, older)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds
	younger := p.orchestration("b-younger", "Hello", "b")
	younger.Spec.InstanceID = "contested"
	create(t, younger)
	for _, o := range []*v1.Orchestration{older, younger} {
		waitFor(t, key(o), "PoolNotFound", conditionIs("StoreReachable", metav1.ConditionFalse, "PoolNotFound"))
	}

	store := pgtest.OpenSchema(t, p.schema)
	if err := dxruntime.NewClient(store).Start(t.Context(), "contested", "Hello", "b",
		dxruntime.StartOwner(controllers.OwnerOf(younger))); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*v1.Orchestration{younger, older} {
		changeStatus(t, o, func() { o.Status.InstanceID, o.Status.Phase = "contested", v1.PhasePending })
	}

	createSecret(t, ns, "pg", pgURL)
	create(t, &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns},
		Spec: v1.WorkerPoolSpec{Image: "duroxide/sample-worker:test",
			Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "pg"}, Schema: p.schema}}})
	t.Cleanup(func() { stores.Close(types.NamespacedName{Namespace: ns, Name: p.name}) })
	p.store, p.client = store, dxruntime.NewClient(store)
	startWorkers(t, store, workerOptions())
	checkOneWinner(t, p, "contested", "b-younger", "a-older")
	if o := waitFor(t, key(younger), "Completed", phaseIs(v1.PhaseCompleted)); o.Status.Output != `"Hello, b!"` {
		t.Errorf("the younger object, the instance's owner: %s", describe(o))
	}
}
