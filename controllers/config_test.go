package controllers_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/samples"
)

// The files of config/samples, applied as they are (only the Secret's URL
// and the pool's schema pointed at the test server), run every sample to
// Succeeded with the output the demo expects.
func TestConfigSamplesSucceed(t *testing.T) {
	ns := namespace(t)
	files, err := filepath.Glob("../config/samples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("samples: %v %v", files, err)
	}
	want := map[string]string{}
	for _, d := range samples.Demos() {
		want[d.Orchestration] = d.Want
	}
	schema := pgtest.RandomSchema()
	var orchs []*v1.Orchestration
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch meta.Kind {
		case "Secret":
			s := &corev1.Secret{}
			mustDecode(t, f, raw, s)
			s.Namespace, s.StringData["url"] = ns, pgURL
			create(t, s)
		case "WorkerPool":
			wp := &v1.WorkerPool{}
			mustDecode(t, f, raw, wp)
			wp.Namespace, wp.Spec.Postgres.Schema = ns, schema
			create(t, wp)
			t.Cleanup(func() { stores.Close(types.NamespacedName{Namespace: ns, Name: wp.Name}) })
		case "Orchestration":
			o := &v1.Orchestration{}
			mustDecode(t, f, raw, o)
			o.Namespace = ns
			orchs = append(orchs, o)
		default:
			t.Fatalf("%s: unexpected kind %q", f, meta.Kind)
		}
	}
	store := pgtest.OpenSchema(t, schema)
	t.Cleanup(func() { _ = store.DropSchema(t.Context()) })
	startWorkers(t, store, workerOptions())
	// The gpu pool's worker: the workers of a pool's Deployment do not run here.
	startWorkers(t, store, samples.GPUWorkerOptions(workerOptions()))
	if len(orchs) != len(samples.Demos()) {
		t.Errorf("%d Orchestration samples for %d demos", len(orchs), len(samples.Demos()))
	}
	for _, o := range orchs {
		create(t, o)
	}
	for _, o := range orchs {
		got := waitFor(t, key(o), "Succeeded", conditionIs("Succeeded", metav1.ConditionTrue, "Completed"))
		if got.Status.Output != want[o.Spec.Orchestration] {
			t.Errorf("%s: output %s, want %s", o.Name, got.Status.Output, want[o.Spec.Orchestration])
		}
	}
}

func mustDecode(t *testing.T, file string, raw []byte, obj any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(raw, obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// config/default builds with kustomize and the API server accepts all of it
// (server-side dry run): CRDs, RBAC, the operator's namespace and Deployment.
func TestKustomizeDefaultApplies(t *testing.T) {
	admin, err := testEnv.AddUser(envtest.User{Name: "kustomize-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := admin.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command(kubectl.Path, "kustomize", "../config/default")
	manifests, err := build.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}
	for _, kind := range []string{"CustomResourceDefinition", "ClusterRole", "ServiceAccount", "Deployment", "Namespace"} {
		if !bytes.Contains(manifests, []byte("kind: "+kind+"\n")) {
			t.Errorf("config/default has no %s", kind)
		}
	}
	// A dry run creates nothing, so the namespaced objects need a real namespace
	// (left from an earlier run with -count>1: envtest runs no namespace controller).
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "duroxide-system"}}
	if err := k8s.Create(t.Context(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace duroxide-system: %v", err)
	}
	cmd := exec.Command(kubectl.Path, append(kubectl.Opts, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-")...)
	cmd.Stdin = bytes.NewReader(manifests)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("apply --dry-run=server: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "(server dry run)"); n < 8 {
		t.Errorf("dry run applied %d objects, want at least 8:\n%s", n, out)
	}
}
