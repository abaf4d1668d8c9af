package controllers_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
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
// An orchestration no worker registers waits, untouched, for one that
// does: the pool's workers (poison limit 2) never fetch it, so nothing fails
// it, and the status says why it waits.
func TestUnregisteredOrchestrationWaits(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("nobody", "NotDeployed", nil)
	create(t, o)
	got := waitFor(t, key(o), "Running=False OrchestrationNotRegistered",
		conditionIs("Running", metav1.ConditionFalse, "OrchestrationNotRegistered"))
	if got.Status.Phase != v1.PhasePending || got.Status.Failure != nil {
		t.Fatalf("phase %s failure %+v, want Pending and no failure", got.Status.Phase, got.Status.Failure)
	}
	st, err := p.client.Status(t.Context(), got.Status.InstanceID)
	if err != nil || st.Status != dxruntime.StatusPending || st.LastError != nil {
		t.Fatalf("store status %+v %v, want Pending and never tried", st, err)
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
