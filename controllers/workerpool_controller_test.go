package controllers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/controllers"
	"github.com/duroxide/duroxide-go/internal/metricdocs"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/runtime"
)

// A WorkerPool owns a Deployment of its image with the pool's settings; the
// connection string reaches the pods only as a Secret reference.
func TestWorkerPoolDeployment(t *testing.T) {
	p := newPool(t)
	pool := &v1.WorkerPool{}
	if err := k8s.Get(t.Context(), types.NamespacedName{Namespace: p.ns, Name: p.name}, pool); err != nil {
		t.Fatal(err)
	}
	change(t, pool, func() {
		pool.Spec.OrchestrationConcurrency = ptr.To[int32](4)
		pool.Spec.LockTimeout = &metav1.Duration{Duration: 45 * time.Second}
	})
	dep := waitForDeployment(t, p, func(d *appsv1.Deployment) bool {
		return envValue(d, "DUROXIDE_ORCHESTRATION_CONCURRENCY") == "4"
	})
	c := dep.Spec.Template.Spec.Containers[0]
	if c.Image != "duroxide/sample-worker:test" || ptr.Deref(dep.Spec.Replicas, -1) != 1 {
		t.Errorf("image %s replicas %v", c.Image, dep.Spec.Replicas)
	}
	for name, want := range map[string]string{"DUROXIDE_POSTGRES_SCHEMA": p.schema, "DUROXIDE_LOCK_TIMEOUT": "45s", "DUROXIDE_POOL": "pool"} {
		if got := envValue(dep, name); got != want {
			t.Errorf("env %s = %q, want %q", name, got, want)
		}
	}
	for _, e := range c.Env {
		if e.Name == "DUROXIDE_POSTGRES_URL" && (e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Name != "pg" || e.ValueFrom.SecretKeyRef.Key != "url") {
			t.Errorf("connection string env %+v, want a reference to secret pg key url", e)
		}
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil {
		t.Errorf("probes %+v %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	if len(dep.OwnerReferences) != 1 || dep.OwnerReferences[0].UID != pool.UID || !ptr.Deref(dep.OwnerReferences[0].Controller, false) {
		t.Errorf("owner references %+v", dep.OwnerReferences)
	}
	got := waitForPool(t, key(pool), func(p *v1.WorkerPool) bool {
		return poolCondition(p, "StoreReachable", metav1.ConditionTrue, "Connected") && p.Status.Instances != nil
	})
	if got.Status.Selector != "duroxide.io/pool=pool" || got.Status.QueueDepths == nil {
		t.Errorf("pool status %+v", got.Status)
	}
}

// The pool's store status counts its instances, and the operator's metrics
// report them, labelled with the pool and its store, with the lag of the
// status it wrote.
func TestWorkerPoolCountsInstances(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("one", "Hello", "counts")
	create(t, o)
	waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	waitForPool(t, types.NamespacedName{Namespace: p.ns, Name: p.name}, func(wp *v1.WorkerPool) bool {
		return wp.Status.Instances != nil && wp.Status.Instances.Completed == 1
	})
	pool := map[string]string{"namespace": p.ns, "pool": p.name, "store": "pg/url/" + p.schema}
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"duroxide_store_reachable", pool, 1},
		{"duroxide_store_instances", with(pool, "status", "completed"), 1},
		{"duroxide_store_instances", with(pool, "status", "running"), 0},
		{"duroxide_store_queue_depth", with(pool, "queue", "worker"), 0},
	} {
		if got, ok := gathered(t, c.family, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	documented, err := metricdocs.Documented("..")
	if err != nil {
		t.Fatal(err)
	}
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "duroxide_") && !documented[f.GetName()] {
			t.Errorf("the operator exports %s, which %s does not document", f.GetName(), metricdocs.Page)
		}
	}
	for _, family := range []string{"duroxide_operator_status_lag_seconds", "duroxide_operator_start_latency_seconds"} {
		if n, ok := gathered(t, family, nil); !ok || n < 1 {
			t.Errorf("%s: %v observations (found %v), want at least the one of this instance", family, n, ok)
		}
	}
}

// with is labels and one more.
func with(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for lk, lv := range labels {
		out[lk] = lv
	}
	return out
}

// gathered reads the operator's metrics registry: metricdocs.Value of the
// named family.
func gathered(t *testing.T, family string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == family {
			return metricdocs.Value(f, labels)
		}
	}
	return 0, false
}

// `kubectl scale` (the scale subresource) and spec edits resize the Deployment.
func TestWorkerPoolScales(t *testing.T) {
	p := newPool(t)
	pool := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name}}
	// The controller writes the pool's status meanwhile, so a read-modify-write
	// of the scale can conflict: retry it, as any client must.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale := &autoscalingv1.Scale{}
		if err := k8s.SubResource("scale").Get(t.Context(), pool, scale); err != nil {
			return err
		}
		scale.Spec.Replicas = 3
		return k8s.SubResource("scale").Update(t.Context(), pool, client.WithSubResourceBody(scale))
	})
	if err != nil {
		t.Fatalf("scale to 3: %v", err)
	}
	waitForDeployment(t, p, func(d *appsv1.Deployment) bool { return ptr.Deref(d.Spec.Replicas, -1) == 3 })
	change(t, pool, func() { pool.Spec.Replicas = ptr.To[int32](0) })
	waitForDeployment(t, p, func(d *appsv1.Deployment) bool { return ptr.Deref(d.Spec.Replicas, -1) == 0 })
	// Someone scaling the Deployment itself is put back: the pool decides.
	dep := waitForDeployment(t, p, func(*appsv1.Deployment) bool { return true })
	change(t, dep, func() { dep.Spec.Replicas = ptr.To[int32](5) })
	waitForDeployment(t, p, func(d *appsv1.Deployment) bool { return ptr.Deref(d.Spec.Replicas, -1) == 0 })
}

func waitForDeployment(t *testing.T, p *testPool, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	return eventually(t, types.NamespacedName{Namespace: p.ns, Name: p.name}, &appsv1.Deployment{}, "the deployment", ok,
		func(d *appsv1.Deployment) string { return fmt.Sprintf("replicas=%v", d.Spec.Replicas) })
}

func waitForPool(t *testing.T, k types.NamespacedName, ok func(*v1.WorkerPool) bool) *v1.WorkerPool {
	t.Helper()
	return eventually(t, k, &v1.WorkerPool{}, "the pool", ok,
		func(p *v1.WorkerPool) string { return fmt.Sprintf("status=%+v", p.Status) })
}

func poolCondition(p *v1.WorkerPool, typ string, status metav1.ConditionStatus, reason string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ && c.Status == status && (reason == "" || c.Reason == reason) {
			return true
		}
	}
	return false
}

func envValue(d *appsv1.Deployment, name string) string {
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// The pod template is merged into the worker pods: host network (then no
// fixed ports or probes), labels, annotations, resources, tolerations, pull
// policy, and env entries that replace the operator's.
func TestWorkerPoolPodTemplate(t *testing.T) {
	p := newPool(t)
	pool := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name}}
	change(t, pool, func() {
		pool.Spec.PodTemplate = &v1.WorkerPodTemplate{
			Labels: map[string]string{"team": "payments"}, Annotations: map[string]string{"note": "e2e"},
			HostNetwork: true, ImagePullPolicy: corev1.PullNever,
			Resources:   &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
			Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			Env:         []corev1.EnvVar{{Name: "DUROXIDE_DRAIN_TIMEOUT", Value: "5s"}, {Name: "DUROXIDE_POOL", Value: "renamed"}},
		}
	})
	dep := waitForDeployment(t, p, func(d *appsv1.Deployment) bool { return d.Spec.Template.Spec.HostNetwork })
	spec := dep.Spec.Template.Spec
	c := spec.Containers[0]
	if dep.Spec.Template.Labels["team"] != "payments" || dep.Spec.Template.Labels["duroxide.io/pool"] != "pool" ||
		dep.Spec.Template.Annotations["note"] != "e2e" {
		t.Errorf("labels %v annotations %v", dep.Spec.Template.Labels, dep.Spec.Template.Annotations)
	}
	if spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet || len(spec.Tolerations) != 1 || c.ImagePullPolicy != corev1.PullNever ||
		c.Resources.Limits.Memory().String() != "64Mi" {
		t.Errorf("pod spec %+v", spec)
	}
	if len(c.Ports) != 0 || c.ReadinessProbe != nil || c.LivenessProbe != nil {
		t.Errorf("host network pods must not claim fixed ports or probe them: ports %v", c.Ports)
	}
	for name, want := range map[string]string{"DUROXIDE_HEALTH_ADDR": "127.0.0.1:0", "DUROXIDE_METRICS_ADDR": "0",
		"DUROXIDE_DRAIN_TIMEOUT": "5s", "DUROXIDE_POOL": "renamed"} {
		if got := envValue(dep, name); got != want {
			t.Errorf("env %s = %q, want %q", name, got, want)
		}
	}
}

// Deleting a namespace deletes the pool and its Orchestrations at once. The
// pool waits (finalizer) until its Orchestrations' deletion policies are
// applied: the running instance ends Terminated in the store, though no
// worker is left to run that turn (the operator runs it). Then the pool goes
// and its store client is closed.
func TestPoolDeletionWaitsForOrchestrationPolicies(t *testing.T) {
	p := newPool(t)
	o := p.orchestration("held", "Tally", []string{"never"})
	create(t, o)
	running := waitFor(t, key(o), "Running", phaseIs(v1.PhaseRunning))
	k := types.NamespacedName{Namespace: p.ns, Name: p.name}
	if !stores.IsOpen(k) {
		t.Fatal("no store client open for a pool in use")
	}
	pool := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name}}
	if err := k8s.Delete(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	waiting := eventually(t, k, &v1.WorkerPool{}, "pool waiting for its Orchestrations", func(wp *v1.WorkerPool) bool {
		c := meta.FindStatusCondition(wp.Status.Conditions, "Ready")
		return !wp.DeletionTimestamp.IsZero() && c != nil && c.Reason == "Deleting"
	}, func(wp *v1.WorkerPool) string { return fmt.Sprintf("%+v", wp.Status.Conditions) })
	if !slices.Contains(waiting.Finalizers, controllers.PoolFinalizer) {
		t.Fatalf("deleting pool finalizers %v", waiting.Finalizers)
	}
	if err := k8s.Delete(t.Context(), running); err != nil {
		t.Fatal(err)
	}
	waitGone(t, running)
	if st, err := p.client.Status(t.Context(), running.Status.InstanceID); err != nil || st.Status != runtime.StatusTerminated {
		t.Fatalf("instance after its pool and object were deleted: %+v, %v; want Terminated", st, err)
	}
	waitGone(t, pool)
	deadline := time.Now().Add(30 * time.Second)
	for stores.IsOpen(k) {
		if time.Now().After(deadline) {
			t.Fatal("store client still open 30s after the pool was deleted")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A pool is Ready with at least one available worker and its store
// reachable, so that `kubectl wait --for=condition=Ready workerpool/x` works.
func TestWorkerPoolReady(t *testing.T) {
	p := newPool(t)
	k := types.NamespacedName{Namespace: p.ns, Name: p.name}
	show := func(wp *v1.WorkerPool) string { return fmt.Sprintf("%+v", wp.Status.Conditions) }
	eventually(t, k, &v1.WorkerPool{}, "Ready=False while no worker is available", func(wp *v1.WorkerPool) bool {
		return meta.IsStatusConditionFalse(wp.Status.Conditions, "Ready")
	}, show)
	dep := &appsv1.Deployment{}
	if err := k8s.Get(t.Context(), k, dep); err != nil {
		t.Fatal(err)
	}
	// envtest runs no Deployment controller: report the rollout as one would.
	dep.Status.Replicas, dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = 1, 1, 1
	dep.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue,
		Reason: "MinimumReplicasAvailable", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if err := k8s.Status().Update(t.Context(), dep); err != nil {
		t.Fatal(err)
	}
	eventually(t, k, &v1.WorkerPool{}, "Ready=True", func(wp *v1.WorkerPool) bool {
		return meta.IsStatusConditionTrue(wp.Status.Conditions, "Ready")
	}, show)
}

// A pool scaled to 0 is not Ready: its Deployment is Available (all of its 0
// replicas are), but no worker runs its instances, so `kubectl wait
// --for=condition=Ready` must not return.
func TestWorkerPoolScaledToZeroIsNotReady(t *testing.T) {
	p := newPool(t)
	k := types.NamespacedName{Namespace: p.ns, Name: p.name}
	pool := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name}}
	change(t, pool, func() { pool.Spec.Replicas = ptr.To[int32](0) })
	dep := waitForDeployment(t, p, func(d *appsv1.Deployment) bool { return ptr.Deref(d.Spec.Replicas, -1) == 0 })
	// envtest runs no Deployment controller: report the scaled-down Deployment as it would.
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Conditions: []appsv1.DeploymentCondition{{
		Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
		LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}}
	if err := k8s.Status().Update(t.Context(), dep); err != nil {
		t.Fatal(err)
	}
	got := waitForPool(t, k, func(wp *v1.WorkerPool) bool {
		return poolCondition(wp, "Available", metav1.ConditionTrue, "") && poolCondition(wp, "StoreReachable", metav1.ConditionTrue, "")
	})
	ready := meta.FindStatusCondition(got.Status.Conditions, "Ready")
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != "ScaledToZero" {
		t.Fatalf("pool at 0 replicas: Ready %+v; want False, reason ScaledToZero", ready)
	}
	t.Logf("Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message)
}

// A Secret created after its pool is picked up at once (the operator watches
// the Secrets pools name), not at the next retry of a doubling backoff.
func TestSecretCreatedAfterPool(t *testing.T) {
	ns := namespace(t)
	schema := pgtest.RandomSchema()
	wp := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: ns},
		Spec: v1.WorkerPoolSpec{Image: "w:1", Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "late"}, Schema: schema}}}
	create(t, wp)
	store := pgtest.OpenSchema(t, schema)
	t.Cleanup(func() { stores.Close(types.NamespacedName{Namespace: ns, Name: "pool"}) })
	startWorkers(t, store, workerOptions())
	o := &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: ns},
		Spec: v1.OrchestrationSpec{WorkerPool: "pool", Orchestration: "Hello", Input: js("secret")}}
	create(t, o)
	waitFor(t, key(o), "SecretNotFound", conditionIs("StoreReachable", metav1.ConditionFalse, "SecretNotFound"))
	// Let the backoff grow (1s, 2s, 4s, 8s: the next try would be ~7s away).
	time.Sleep(8 * time.Second)
	createSecret(t, ns, "late", pgURL)
	created := time.Now()
	waitFor(t, key(o), "Completed", phaseIs(v1.PhaseCompleted))
	if took := time.Since(created); took > 4*time.Second {
		t.Fatalf("the Orchestration completed %v after its Secret appeared; want it picked up at once", took.Round(time.Millisecond))
	}
}
