package v1alpha1_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
)

// These tests run the CRDs in config/crd/bases on a real kube-apiserver and
// etcd (envtest). `make test` builds the binaries (hack/k8s-binaries.sh) and
// sets KUBEBUILDER_ASSETS.
var (
	k8s client.Client
	env *envtest.Environment
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// The SQLite-only loop: say what is left out, and run nothing here.
		fmt.Fprintln(os.Stderr, "skipping these tests under -short: they need kube-apiserver and etcd (run `make test`)")
		_ = flag.Set("test.run", "^$")
		os.Exit(m.Run())
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "api/v1alpha1 tests need kube-apiserver and etcd: run them with `make test`, "+
			"or set KUBEBUILDER_ASSETS=$(hack/k8s-binaries.sh)")
		os.Exit(1)
	}
	env = &envtest.Environment{CRDDirectoryPaths: []string{"../../config/crd/bases"}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start envtest:", err)
		os.Exit(1)
	}
	scheme := runtime.NewScheme()
	_ = v1.AddToScheme(scheme)
	_ = autoscalingv1.AddToScheme(scheme)
	k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, "client:", err)
	}
	_ = env.Stop()
	os.Exit(code)
}

func js(s string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(s)} }

func orchestration(name string) *v1.Orchestration {
	return &v1.Orchestration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.OrchestrationSpec{WorkerPool: "pool", Orchestration: "Hello", Input: js(`"World"`),
			Events: []v1.OrchestrationEvent{{Name: "approval", Data: js(`{"by":"alice"}`)}}},
	}
}

func pool(name string) *v1.WorkerPool {
	return &v1.WorkerPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.WorkerPoolSpec{Image: "worker:1",
			Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "pg"}}},
	}
}

func TestCreateRefusesBadSpecs(t *testing.T) {
	cases := []struct {
		name   string
		obj    client.Object
		reason string
	}{
		{"orchestration without pool", func() client.Object { o := orchestration("no-pool"); o.Spec.WorkerPool = ""; return o }(), "spec.workerPool"},
		{"orchestration without name", func() client.Object { o := orchestration("no-name"); o.Spec.Orchestration = ""; return o }(), "spec.orchestration"},
		{"unknown deletion policy", func() client.Object { o := orchestration("bad-policy"); o.Spec.DeletionPolicy = "Delete"; return o }(), "spec.deletionPolicy"},
		{"unknown ID-reuse policy", func() client.Object { o := orchestration("bad-reuse"); o.Spec.IDReusePolicy = "Sometimes"; return o }(), "spec.idReusePolicy"},
		{"negative TTL", func() client.Object {
			o := orchestration("bad-ttl")
			o.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1)
			return o
		}(), "spec.ttlSecondsAfterFinished"},
		{"duplicate event names without keys", func() client.Object {
			o := orchestration("dup-events")
			o.Spec.Events = append(o.Spec.Events, v1.OrchestrationEvent{Name: "approval"})
			return o
		}(), "event keys must be unique"},
		{"a key equal to another entry's name", func() client.Object {
			o := orchestration("dup-keys")
			o.Spec.Events = append(o.Spec.Events, v1.OrchestrationEvent{Name: "other", Key: "approval"})
			return o
		}(), "event keys must be unique"},
		{"version that is not semver", func() client.Object { o := orchestration("bad-version"); o.Spec.Version = "latest"; return o }(), "version must be a semantic version"},
		{"version with a leading zero", func() client.Object { o := orchestration("bad-version2"); o.Spec.Version = "1.02.0"; return o }(), "version must be a semantic version"},
		{"event without name", func() client.Object {
			o := orchestration("nameless-event")
			o.Spec.Events = []v1.OrchestrationEvent{{Data: js(`1`)}}
			return o
		}(), "spec.events[0].name"},
		{"negative replicas", func() client.Object { p := pool("neg"); p.Spec.Replicas = ptr.To[int32](-1); return p }(), "spec.replicas"},
		{"pool without image", func() client.Object { p := pool("no-image"); p.Spec.Image = ""; return p }(), "spec.image"},
		{"invalid schema name", func() client.Object { p := pool("bad-schema"); p.Spec.Postgres.Schema = "Bad-Schema"; return p }(), "spec.postgres.schema"},
		{"zero concurrency", func() client.Object { p := pool("zero"); p.Spec.ActivityConcurrency = ptr.To[int32](0); return p }(), "spec.activityConcurrency"},
		{"activity tag with a space", tagged("tag-space", "gpu", "big gpu"), `spec.activityTags[1]: Invalid value: "big gpu": an activity tag is 1 to 63 letters`},
		{"activity tag ending in a dot", tagged("tag-dot", "gpu."), `spec.activityTags[0]: Invalid value: "gpu.": an activity tag is`},
		{"empty activity tag", tagged("tag-empty", ""), `spec.activityTags[0]: Invalid value: "": an activity tag is`},
		{"activity tag too long", tagged("tag-long", strings.Repeat("g", 64)), "spec.activityTags[0]: Too long"},
		{"star among other tags", tagged("tag-star", "*", "gpu"), "'*' takes every activity, so it must be the only item"},
		{"a tag twice", tagged("tag-twice", "gpu", "gpu"), `spec.activityTags[1]: Duplicate value: "gpu"`},
		{"too many tags", tagged("tag-many", manyTags(33)...), "spec.activityTags: Too many"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := k8s.Create(context.Background(), c.obj)
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("create: err = %v, want a refusal naming %q", err, c.reason)
			}
		})
	}
}

func TestUpdateRefusesIdentityChangesAndEventEdits(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		mutate  func(o *v1.Orchestration)
		message string // empty: the update is allowed
	}{
		{"change workerPool", func(o *v1.Orchestration) { o.Spec.WorkerPool = "other" }, "workerPool is immutable"},
		{"change orchestration", func(o *v1.Orchestration) { o.Spec.Orchestration = "Other" }, "orchestration is immutable"},
		{"set version", func(o *v1.Orchestration) { o.Spec.Version = "2.0.0" }, "version is immutable"},
		{"set instanceID", func(o *v1.Orchestration) { o.Spec.InstanceID = "other-id" }, "instanceID is immutable"},
		{"remove an event", func(o *v1.Orchestration) { o.Spec.Events = nil }, "existing entries cannot be changed or removed"},
		{"edit an event", func(o *v1.Orchestration) { o.Spec.Events[0].Data = js(`{"by":"mallory"}`) }, "existing entries cannot be changed or removed"},
		{"give an existing event a key", func(o *v1.Orchestration) { o.Spec.Events[0].Key = "k" }, "existing entries cannot be changed or removed"},
		{"append an event", func(o *v1.Orchestration) {
			o.Spec.Events = append(o.Spec.Events, v1.OrchestrationEvent{Name: "second", Data: js(`2`)})
		}, ""},
		{"insert an event before the others", func(o *v1.Orchestration) {
			o.Spec.Events = append([]v1.OrchestrationEvent{{Name: "first", Data: js(`0`)}}, o.Spec.Events...)
		}, ""},
		{"raise the same name again under a key", func(o *v1.Orchestration) {
			o.Spec.Events = append(o.Spec.Events, v1.OrchestrationEvent{Name: "approval", Key: "approval-2", Data: js(`2`)})
		}, ""},
		{"terminate", func(o *v1.Orchestration) { o.Spec.Terminate = "no longer needed" }, ""},
		{"change deletion policy", func(o *v1.Orchestration) { o.Spec.DeletionPolicy = v1.DeletionPurge }, ""},
		{"change ID-reuse policy", func(o *v1.Orchestration) { o.Spec.IDReusePolicy = v1.IDReuseTerminateRunning }, ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := orchestration(fmt.Sprintf("update-%d", i))
			if err := k8s.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
			c.mutate(o)
			err := k8s.Update(ctx, o)
			switch {
			case c.message == "" && err != nil:
				t.Fatalf("update refused: %v", err)
			case c.message != "" && (err == nil || !strings.Contains(err.Error(), c.message)):
				t.Fatalf("update: err = %v, want %q", err, c.message)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	ctx := context.Background()
	o := orchestration("defaults")
	p := pool("defaults")
	if err := k8s.Create(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	if o.Spec.DeletionPolicy != v1.DeletionTerminate || o.Spec.IDReusePolicy != v1.IDReuseFail || p.Spec.Replicas == nil || *p.Spec.Replicas != 1 ||
		p.Spec.Postgres.Schema != "duroxide" || p.Spec.Postgres.SecretRef.Key != "url" {
		t.Fatalf("defaults: policy %q reuse %q replicas %v schema %q key %q", o.Spec.DeletionPolicy, o.Spec.IDReusePolicy, p.Spec.Replicas,
			p.Spec.Postgres.Schema, p.Spec.Postgres.SecretRef.Key)
	}
}

func TestScaleSubresource(t *testing.T) {
	ctx := context.Background()
	p := pool("scaled")
	if err := k8s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	scale := &autoscalingv1.Scale{}
	if err := k8s.SubResource("scale").Get(ctx, p, scale); err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 3
	if err := k8s.SubResource("scale").Update(ctx, p, client.WithSubResourceBody(scale)); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	if *p.Spec.Replicas != 3 {
		t.Fatalf("replicas after /scale: %d, want 3", *p.Spec.Replicas)
	}
}

func TestKubectlExplainShowsFieldDocs(t *testing.T) {
	// The API server publishes a new CRD's OpenAPI a few seconds after install.
	admin, err := env.AddUser(envtest.User{Name: "explainer", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := admin.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	var text, errText string
	for deadline := time.Now().Add(time.Minute); ; {
		out, stderr, err := kubectl.Run("explain", "orchestration.spec")
		text, errText = readAll(out), readAll(stderr)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl explain: %v\n%s", err, errText)
		}
		time.Sleep(250 * time.Millisecond)
	}
	flat := strings.Join(strings.Fields(text), " ") // explain wraps lines
	for _, want := range []string{"workerPool", "names the WorkerPool", "deletionPolicy", "identified by its key"} {
		if !strings.Contains(flat, want) {
			t.Fatalf("kubectl explain orchestration.spec lacks %q:\n%s", want, text)
		}
	}
	t.Logf("kubectl explain orchestration.spec:\n%s", text)
}

func TestVersionAcceptsWhatTheRuntimeRegisters(t *testing.T) {
	for i, v := range []string{"1.0.0", "v2.1.3", "v2", "1.2", "1.0.0-rc.1", "1.0.0+build.5"} {
		o := orchestration(fmt.Sprintf("version-%d", i))
		o.Spec.Version = v
		if err := k8s.Create(context.Background(), o); err != nil {
			t.Errorf("version %q refused: %v", v, err)
		}
	}
}

func tagged(name string, tags ...string) client.Object {
	p := pool(name)
	p.Spec.ActivityTags = tags
	return p
}

func manyTags(n int) []string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("t%d", i)
	}
	return tags
}

// The tags the workers accept (provider.ParseTagFilter) are accepted.
func TestActivityTagsAcceptTheWorkersForms(t *testing.T) {
	for i, tags := range [][]string{{"gpu"}, {"-", "gpu", "ml"}, {"*"}, {"-"}, {"a", "A.b_c-9", strings.Repeat("g", 63)}, manyTags(32)} {
		if err := k8s.Create(context.Background(), tagged(fmt.Sprintf("tags-%d", i), tags...)); err != nil {
			t.Errorf("activityTags %q refused: %v", tags, err)
		}
	}
}
