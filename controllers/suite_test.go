package controllers_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/controllers"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

// The controller tests run the operator in-process against a real
// kube-apiserver and etcd (envtest) and real PostgreSQL; each test's pool
// gets a schema of its own and an in-process runtime running its workers.
// `make test` provides both servers.
var (
	testEnv *envtest.Environment
	k8s     client.Client // the tests' client: cluster admin
	restCfg *rest.Config
	stores  *controllers.Stores
	pgURL   string
)

// operatorUser is who the operator runs as in these tests: a user bound to
// nothing but config/rbac/role.yaml, the ClusterRole generated from the
// controllers' RBAC markers. A missing permission fails the tests.
const operatorUser = "duroxide-operator"

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// The SQLite-only loop: say what is left out, and run nothing here.
		fmt.Fprintln(os.Stderr, "skipping these tests under -short: they need kube-apiserver, etcd and PostgreSQL (run `make test`)")
		_ = flag.Set("test.run", "^$")
		os.Exit(m.Run())
	}
	pgURL = os.Getenv(pgtest.EnvURL)
	if os.Getenv("KUBEBUILDER_ASSETS") == "" || pgURL == "" {
		fmt.Fprintf(os.Stderr, "controller tests need kube-apiserver, etcd and PostgreSQL: run them with `make test`, "+
			"or set KUBEBUILDER_ASSETS=$(hack/k8s-binaries.sh) and %s\n", pgtest.EnvURL)
		os.Exit(1)
	}
	testEnv = &envtest.Environment{CRDDirectoryPaths: []string{"../config/crd/bases"}, ErrorIfCRDPathMissing: true}
	cfg, err := testEnv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start envtest:", err)
		os.Exit(1)
	}
	code := runWithManager(cfg, m)
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}

func runWithManager(cfg *rest.Config, m *testing.M) int {
	restCfg = rest.CopyConfig(cfg)
	restCfg.QPS, restCfg.Burst = 500, 1000
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	scheme := testScheme()
	var err error
	if k8s, err = client.New(restCfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	operatorCfg, err := operatorConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "operator user:", err)
		return 1
	}
	mgr, err := ctrl.NewManager(operatorCfg, ctrl.Options{Scheme: scheme, Cache: controllers.CacheOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	stores, err = controllers.SetupWithStores(ctx, mgr, controllers.Config{
		OrchestrationConcurrency: 8, Resync: 5 * time.Second, PoolStatusInterval: time.Second,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Open: func(ctx context.Context, dsn, schema string) (provider.Provider, error) {
			return postgres.Open(ctx, dsn, postgres.Options{Schema: schema, MaxConns: 10, PollInterval: 200 * time.Millisecond})
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		cancel()
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
	}
	return code
}

// operatorConfig binds the generated ClusterRole to operatorUser and returns
// a client configuration authenticating as that user.
func operatorConfig() (*rest.Config, error) {
	raw, err := os.ReadFile("../config/rbac/role.yaml")
	if err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(raw, role); err != nil {
		return nil, fmt.Errorf("decode role.yaml: %w", err)
	}
	ctx := context.Background()
	if err := k8s.Create(ctx, role); err != nil {
		return nil, fmt.Errorf("create role: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "duroxide-operator-test"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: operatorUser}}}
	if err := k8s.Create(ctx, binding); err != nil {
		return nil, fmt.Errorf("bind role: %w", err)
	}
	user, err := testEnv.AddUser(envtest.User{Name: operatorUser}, nil)
	if err != nil {
		return nil, err
	}
	cfg := user.Config()
	cfg.QPS, cfg.Burst = 500, 1000
	return cfg, nil
}

func zapLevel() zapcore.Level {
	if os.Getenv("DUROXIDE_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, eventsv1.AddToScheme, rbacv1.AddToScheme,
		autoscalingv1.AddToScheme, v1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// testPool is a WorkerPool with its own namespace, schema and workers.
type testPool struct {
	ns, name, schema string
	store            *postgres.Provider
	client           *dxruntime.Client
}

// newPool creates a namespace, the Postgres Secret, a WorkerPool on a fresh
// schema, and starts in-process workers with the sample orchestrations.
func newPool(t *testing.T, opts ...func(*dxruntime.Options)) *testPool {
	t.Helper()
	return newPoolIn(t, namespace(t), opts...)
}

// newPoolIn is newPool in an existing namespace.
func newPoolIn(t *testing.T, ns string, opts ...func(*dxruntime.Options)) *testPool {
	t.Helper()
	p := newIdlePool(t, ns)
	ro := workerOptions()
	for _, o := range opts {
		o(&ro)
	}
	startWorkers(t, p.store, ro)
	return p
}

// newIdlePool is a pool whose workers are not running (yet): scaled to 0,
// or its pods failing.
func newIdlePool(t *testing.T, ns string) *testPool {
	t.Helper()
	p := &testPool{ns: ns, name: "pool", schema: pgtest.RandomSchema()}
	createSecret(t, p.ns, "pg", pgURL)
	wp := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: p.ns},
		Spec: v1.WorkerPoolSpec{Image: "duroxide/sample-worker:test",
			Postgres: v1.PostgresSpec{SecretRef: v1.SecretKeyRef{Name: "pg"}, Schema: p.schema}}}
	create(t, wp)
	p.store = pgtest.OpenSchema(t, p.schema)
	t.Cleanup(func() {
		stores.Close(types.NamespacedName{Namespace: p.ns, Name: p.name})
		_ = p.store.DropSchema(context.Background())
	})
	p.client = dxruntime.NewClient(p.store)
	return p
}

// workerOptions: a small poison limit, so what fails by it fails within
// the test.
func workerOptions() dxruntime.Options {
	return dxruntime.Options{OrchestrationConcurrency: 8, ActivityConcurrency: 16, MaxAttempts: 2,
		RetryBackoff: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
}

func startWorkers(t *testing.T, store *postgres.Provider, opts dxruntime.Options) {
	reg := dxruntime.NewRegistry()
	samples.Register(reg)
	registerTestOrchestrations(reg)
	rt := dxruntime.New(store, reg, opts)
	if err := rt.Start(context.Background()); err != nil {
		t.Fatalf("start workers: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
}

var nsSeq int

func namespace(t *testing.T) string {
	t.Helper()
	nsSeq++
	name := fmt.Sprintf("t%d-%s", nsSeq, strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

func createSecret(t *testing.T, ns, name, url string) {
	t.Helper()
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		StringData: map[string]string{"url": url}})
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := k8s.Create(t.Context(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

func js(v any) *apiextensionsv1.JSON {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return &apiextensionsv1.JSON{Raw: raw}
}

func (p *testPool) orchestration(name, orch string, input any) *v1.Orchestration {
	return &v1.Orchestration{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.ns},
		Spec: v1.OrchestrationSpec{WorkerPool: p.name, Orchestration: orch, Input: js(input)}}
}

func key(o client.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}

// waitFor polls the Orchestration until ok holds; the bound is generous
// because it guards against hangs, not against slowness.
func waitFor(t *testing.T, k types.NamespacedName, what string, ok func(*v1.Orchestration) bool) *v1.Orchestration {
	t.Helper()
	return eventually(t, k, &v1.Orchestration{}, what, ok, func(o *v1.Orchestration) string { return describe(o) })
}

// eventually re-reads obj until ok holds, failing the test after 90 s with
// what it waited for and show's view of the last object read.
func eventually[T client.Object](t *testing.T, k types.NamespacedName, obj T, what string, ok func(T) bool, show func(T) string) T {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := k8s.Get(t.Context(), k, obj)
		if err == nil && ok(obj) {
			return obj
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out waiting for %s; last: err=%v %s", k, what, err, show(obj))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitGone(t *testing.T, obj client.Object) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := k8s.Get(t.Context(), key(obj), obj)
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists (err=%v, finalizers %v)", key(obj), err, obj.GetFinalizers())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func phaseIs(p v1.OrchestrationPhase) func(*v1.Orchestration) bool {
	return func(o *v1.Orchestration) bool { return o.Status.Phase == p }
}

func conditionIs(typ string, status metav1.ConditionStatus, reason string) func(*v1.Orchestration) bool {
	return func(o *v1.Orchestration) bool {
		for _, c := range o.Status.Conditions {
			if c.Type == typ && c.Status == status && (reason == "" || c.Reason == reason) {
				return true
			}
		}
		return false
	}
}

func describe(o *v1.Orchestration) string {
	b, _ := json.Marshal(o.Status)
	return string(b)
}

// change applies mutate to a fresh copy of obj and updates it, again on a
// conflict: the operator writes the same objects' status concurrently.
func change(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	retryUpdate(t, obj, mutate, k8s.Update)
}

// changeStatus is change for the status subresource.
func changeStatus(t *testing.T, obj client.Object, mutate func()) {
	t.Helper()
	retryUpdate(t, obj, mutate, k8s.Status().Update)
}

func retryUpdate[O any](t *testing.T, obj client.Object, mutate func(), update func(context.Context, client.Object, ...O) error) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(t.Context(), key(obj), obj); err != nil {
			return err
		}
		mutate()
		return update(t.Context(), obj)
	})
	if err != nil {
		t.Fatalf("update %s: %v", key(obj), err)
	}
}
