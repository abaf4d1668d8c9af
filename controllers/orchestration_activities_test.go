package controllers_test

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider/postgres"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
	"github.com/duroxide/duroxide-go/worker"
)

// gpuWorker is the ID of the runtime taking the gpu tag in these tests.
const gpuWorker = "gpu-worker-1"

// startGPUWorkers runs a second runtime on the pool's store that takes only
// activities tagged gpu, as a WorkerPool with spec.activityTags [gpu] does.
func startGPUWorkers(t *testing.T, store *postgres.Provider) {
	t.Helper()
	opts := workerOptions()
	opts.WorkerID = gpuWorker
	opts.ActivityTags = dxruntime.TagFilter{Tags: []string{samples.GPUTag}}
	startWorkers(t, store, opts)
}

// An activity tagged for workers the store lacks is explained on its running
// instance (ActivitiesServed=False NoWorkerForTag: the activity, its tag and
// what the live workers take), with a Warning Event and in the status
// summary; when a worker taking the tag comes, it runs the activity and the
// condition turns True; when the instance finishes, the condition goes.
func TestActivityWithNoWorkerForItsTagIsExplained(t *testing.T) {
	p := newPool(t) // its workers take untagged activities only
	o := p.orchestration("render", "RenderThenWait", "teapot")
	create(t, o)

	got := waitFor(t, key(o), "ActivitiesServed=False NoWorkerForTag",
		conditionIs("ActivitiesServed", metav1.ConditionFalse, "NoWorkerForTag"))
	if got.Status.Phase != v1.PhaseRunning {
		t.Errorf("phase %s, want Running", got.Status.Phase)
	}
	msg := conditionMessage(got, "ActivitiesServed")
	for _, want := range []string{`activity "RenderFrame" with tag "gpu"`, `no live worker of the store of pool pool takes tag "gpu"`,
		"The 1 that registers it takes untagged activities only (1 worker).", "spec.activityTags [gpu]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("condition message %q lacks %q", msg, want)
		}
	}
	if got.Status.Reason != "NoWorkerForTag" {
		t.Errorf("status summary %q %q, want reason NoWorkerForTag", got.Status.Reason, got.Status.Message)
	}
	wantEvent(t, o, "NoWorkerForTag")

	startGPUWorkers(t, p.store)
	served := waitFor(t, key(o), "ActivitiesServed=True", conditionIs("ActivitiesServed", metav1.ConditionTrue, "Served"))
	if served.Status.Phase != v1.PhaseRunning || !strings.Contains(served.Status.CustomStatus, "rendered by "+gpuWorker) {
		t.Errorf("phase %s, custom status %s: want Running, rendered by %s", served.Status.Phase, served.Status.CustomStatus, gpuWorker)
	}
	if served.Status.Reason == "NoWorkerForTag" {
		t.Errorf("status summary still %q", served.Status.Reason)
	}

	change(t, served, func() { served.Spec.Events = []v1.OrchestrationEvent{{Name: "done"}} })
	done := waitFor(t, key(o), "Succeeded", conditionIs("Succeeded", metav1.ConditionTrue, "Completed"))
	if done.Status.Output != `"frame teapot rendered by `+gpuWorker+`"` {
		t.Errorf("output %s", done.Status.Output)
	}
	if slices.ContainsFunc(done.Status.Conditions, func(c metav1.Condition) bool { return c.Type == "ActivitiesServed" }) {
		t.Errorf("a finished instance keeps ActivitiesServed: %s", describe(done))
	}
}

// An activity no live worker registers is explained with what they register;
// an instance whose activities run gets no condition at all.
func TestActivityNoWorkerRegistersIsExplained(t *testing.T) {
	p := newPool(t, keepRetrying)
	missing := p.orchestration("missing", "CallsUnregistered", "x")
	create(t, missing)
	fine := p.orchestration("fine", "RenderThenWait", "cube")
	startGPUWorkers(t, p.store)
	create(t, fine)

	got := waitFor(t, key(missing), "ActivitiesServed=False ActivityNotRegistered",
		conditionIs("ActivitiesServed", metav1.ConditionFalse, "ActivityNotRegistered"))
	msg := conditionMessage(got, "ActivitiesServed")
	for _, want := range []string{`activity "NotDeployed" (untagged)`, "none of the 2 live workers of the store of pool pool registers it",
		"Greet", "RenderFrame", "They take tags gpu (1 worker); untagged activities only (1 worker)."} {
		if !strings.Contains(msg, want) {
			t.Errorf("condition message %q lacks %q", msg, want)
		}
	}
	wantEvent(t, missing, "ActivityNotRegistered")

	ran := waitFor(t, key(fine), "the rendered frame", func(o *v1.Orchestration) bool {
		return strings.Contains(o.Status.CustomStatus, "rendered by")
	})
	if slices.ContainsFunc(ran.Status.Conditions, func(c metav1.Condition) bool { return c.Type == "ActivitiesServed" }) {
		t.Errorf("an instance whose activity ran has ActivitiesServed: %s", describe(ran))
	}
}

// A pool's activityTags reach its Deployment as DUROXIDE_ACTIVITY_TAGS, and
// leave it when the field is emptied.
func TestWorkerPoolActivityTagsEnv(t *testing.T) {
	p := newIdlePool(t, namespace(t))
	pool := &v1.WorkerPool{}
	if err := k8s.Get(t.Context(), types.NamespacedName{Namespace: p.ns, Name: p.name}, pool); err != nil {
		t.Fatal(err)
	}
	change(t, pool, func() { pool.Spec.ActivityTags = []string{"-", "gpu"} })
	waitForDeployment(t, p, func(d *appsv1.Deployment) bool { return envValue(d, worker.EnvActivityTags) == "-,gpu" })
	change(t, pool, func() { pool.Spec.ActivityTags = nil })
	waitForDeployment(t, p, func(d *appsv1.Deployment) bool {
		return !slices.ContainsFunc(d.Spec.Template.Spec.Containers[0].Env, func(e corev1.EnvVar) bool { return e.Name == worker.EnvActivityTags })
	})
}

// registerTaggedTestOrchestrations: RenderThenWait renders a frame on a gpu
// worker (samples' RenderFrame), shows who rendered it as its custom status,
// and keeps running until event "done"; CallsUnregistered calls an activity
// no worker registers.
func registerTaggedTestOrchestrations(reg *dxruntime.Registry) {
	dxruntime.RegisterOrchestration(reg, "RenderThenWait", func(ctx *dxruntime.OrchestrationContext, frame string) (string, error) {
		out, err := dxruntime.Await[string](ctx.CallActivity("RenderFrame", frame, dxruntime.WithTag(samples.GPUTag)))
		if err != nil {
			return "", err
		}
		ctx.SetCustomStatus(out)
		if err := ctx.WaitForEvent("done").Await(nil); err != nil {
			return "", err
		}
		return out, nil
	})
	dxruntime.RegisterOrchestration(reg, "CallsUnregistered", func(ctx *dxruntime.OrchestrationContext, in string) (string, error) {
		return dxruntime.Await[string](ctx.CallActivity("NotDeployed", in))
	})
}
