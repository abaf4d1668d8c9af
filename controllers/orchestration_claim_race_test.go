package controllers_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
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
