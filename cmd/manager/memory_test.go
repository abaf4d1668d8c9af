package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
)

var (
	memObjects = flag.Int("objects", 500, "Orchestrations TestOperatorMemory creates (make operator-memory: 5000)")
	memInput   = flag.Int("input-kib", 10, "KiB of spec.input per Orchestration")
)

// memoryBudget is the operator's resident memory goal with 5,000
// Orchestrations of 10 KiB input each.
const memoryBudget = 100 << 20

// TestOperatorMemory runs the operator binary against a real API server
// (envtest) holding -objects Orchestrations of -input-kib input, as after
// a restart: it lists them all, starts every instance (no worker runs them)
// and mirrors them. It reports the process's resident memory once all are
// started, and fails above memoryBudget.
func TestOperatorMemory(t *testing.T) {
	pgURL := pgtest.URL(t)
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("TestOperatorMemory needs kube-apiserver and etcd: run it with `make test` or `make operator-memory`")
	}
	env := &envtest.Environment{CRDDirectoryPaths: []string{"../../config/crd/bases"}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := env.AddUser(envtest.User{Name: "memory-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	k8s, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		t.Fatal(err)
	}
	createObjects(t, k8s, pgURL, *memObjects, *memInput<<10)

	bin := filepath.Join(dir, "manager")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build manager: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--kube-api-qps=1000", "--kube-api-burst=2000", "--orchestration-concurrency=16", "--zap-log-level=error")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kcPath)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	waitAllStarted(t, k8s, *memObjects)
	time.Sleep(5 * time.Second) // let the reconciles after the starts settle
	rss, peak := memoryOf(t, cmd.Process.Pid)
	t.Logf("operator memory with %d Orchestrations of %d KiB input: RSS %.1f MiB, peak RSS %.1f MiB (all started in %v)",
		*memObjects, *memInput, float64(rss)/(1<<20), float64(peak)/(1<<20), time.Since(began).Round(time.Second))
	fmt.Printf("RESULT operator_memory objects=%d input_kib=%d rss_mib=%.1f peak_rss_mib=%.1f\n",
		*memObjects, *memInput, float64(rss)/(1<<20), float64(peak)/(1<<20))
	if rss > memoryBudget {
		t.Fatalf("operator RSS %.1f MiB, budget %d MiB", float64(rss)/(1<<20), memoryBudget>>20)
	}
}

// createObjects creates a pool on a fresh schema and n Orchestrations with
// inputBytes of input each, applied with kubectl's last-applied annotation
// as a user's `kubectl apply` would.
func createObjects(t *testing.T, k8s client.Client, pgURL string, n, inputBytes int) {
	t.Helper()
	ctx := t.Context()
	schema := pgtest.RandomSchema()
	store := pgtest.OpenSchema(t, schema)
	t.Cleanup(func() { _ = store.DropSchema(context.Background()) })
	mustCreate(t, k8s, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pg", Namespace: "default"}, StringData: map[string]string{"url": pgURL}})
	mustCreate(t, k8s, &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: "default"},
		Spec: v1.WorkerPoolSpec{Image: "w:1", Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "pg"}, Schema: schema}}})
	input := &apiextensionsv1.JSON{Raw: []byte(strconv.Quote(strings.Repeat("x", inputBytes)))}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				o := &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("o-%05d", i), Namespace: "default"},
					Spec: v1.OrchestrationSpec{WorkerPool: "pool", Orchestration: "Hello", Input: input}}
				o.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(input.Raw)}
				if err := k8s.Create(ctx, o); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		if i%1000 == 0 {
			t.Logf("creating Orchestrations: %d of %d", i, n)
		}
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("create: %v", err)
	}
}

func mustCreate(t *testing.T, k8s client.Client, obj client.Object) {
	t.Helper()
	if err := k8s.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

// waitAllStarted waits until every Orchestration has an instance started.
func waitAllStarted(t *testing.T, k8s client.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Minute)
	last := -1
	for time.Now().Before(deadline) {
		// Metadata only (the inputs would make each poll heavy): the
		// selectable status.phase is Pending once the instance is started.
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(v1.GroupVersion.WithKind("OrchestrationList"))
		if err := k8s.List(t.Context(), list, client.InNamespace("default"),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("status.phase", "Pending")}); err != nil {
			t.Fatal(err)
		}
		started := len(list.Items)
		if started != last {
			t.Logf("instances started: %d of %d", started, n)
			last = started
		}
		if started == n {
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Fatalf("only %d of %d instances started in 15 minutes", last, n)
}

// memoryOf reads a process's resident and peak resident memory in bytes.
func memoryOf(t *testing.T, pid int) (rss, peak int64) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak
}
