package controllers_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// An Orchestration naming a pool that does not exist says so; when the pool
// appears, the instance starts and completes.
func TestMissingPoolThenPoolAppears(t *testing.T) {
	ns := namespace(t)
	o := &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{Name: "early", Namespace: ns},
		Spec: v1.OrchestrationSpec{WorkerPool: "pool", Orchestration: "Hello", Input: js("late pool")}}
	create(t, o)
	got := waitFor(t, key(o), "PoolNotFound", conditionIs("StoreReachable", metav1.ConditionFalse, "PoolNotFound"))
	if got.Status.Phase != v1.PhasePending || !strings.Contains(conditionMessage(got, "StoreReachable"), `WorkerPool "pool" not found`) {
		t.Errorf("status %s", describe(got))
	}
	wantEvent(t, o, "PoolNotFound")
	newPoolIn(t, ns)
	done := waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	if done.Status.Output != `"Hello, late pool!"` || !conditionIs("StoreReachable", metav1.ConditionTrue, "Connected")(done) {
		t.Errorf("status %s", describe(done))
	}
}

// A pool whose Secret is missing, lacks the key, or points at no server is
// reported on its Orchestrations and on the pool, without the credentials.
func TestStoreProblemsAreConditions(t *testing.T) {
	cases := []struct {
		name, secretURL string // "" = no Secret
		reason          string
	}{
		{"no secret", "", "SecretNotFound"},
		{"unreachable", "postgres://dx:s3cret-pw@127.0.0.1:1/none?connect_timeout=1", "StoreUnreachable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ns := namespace(t)
			if c.secretURL != "" {
				createSecret(t, ns, "pg", c.secretURL)
			}
			wp := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: ns},
				Spec: v1.WorkerPoolSpec{Image: "w:1", Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "pg"}}}}
			create(t, wp)
			o := &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: ns},
				Spec: v1.OrchestrationSpec{WorkerPool: "pool", Orchestration: "Hello"}}
			create(t, o)
			got := waitFor(t, key(o), c.reason, conditionIs("StoreReachable", metav1.ConditionFalse, c.reason))
			if msg := conditionMessage(got, "StoreReachable"); strings.Contains(msg, "s3cret") {
				t.Errorf("condition leaks the password: %s", msg)
			}
			if got.Status.InstanceID != "" {
				t.Errorf("instance started without a store: %s", describe(got))
			}
			pool := waitForPool(t, key(wp), func(p *v1.WorkerPool) bool {
				return poolCondition(p, "StoreReachable", metav1.ConditionFalse, c.reason)
			})
			for _, cond := range pool.Status.Conditions {
				if strings.Contains(cond.Message, "s3cret") {
					t.Errorf("pool condition leaks the password: %s", cond.Message)
				}
			}
		})
	}
}

// An orchestration no worker registers ends Failed with a reason that says so.
func TestUnregisteredOrchestration(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("nobody", "NotDeployed", nil)
	create(t, o)
	got := waitFor(t, key(o), "Failed", phaseIs(v1.PhaseFailed))
	if !conditionIs("Failed", metav1.ConditionTrue, "OrchestrationNotRegistered")(got) ||
		!strings.Contains(conditionMessage(got, "Failed"), `orchestration "NotDeployed" is not registered`) {
		t.Errorf("conditions %+v", got.Status.Conditions)
	}
	if got.Status.Failure == nil || got.Status.Failure.Class != "configuration" {
		t.Errorf("failure %+v", got.Status.Failure)
	}
	wantEvent(t, o, "OrchestrationNotRegistered")
}

func conditionMessage(o *v1.Orchestration, typ string) string {
	for _, c := range o.Status.Conditions {
		if c.Type == typ {
			return c.Message
		}
	}
	return ""
}
