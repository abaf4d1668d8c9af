// Command manager is the duroxide operator: it reconciles Orchestrations
// (start, events, terminate, status mirroring) and WorkerPools (worker
// Deployments, store status).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/controllers"
)

type options struct {
	metricsAddr, probeAddr     string
	metricsSecure              bool
	metricsCertDir             string
	uiAddr                     string
	leaderElect                bool
	leaderElectionNamespace    string
	qps                        float64
	burst                      int
	orchestrationConcurrency   int
	resync, poolStatusInterval time.Duration
	limits                     controllers.StatusLimits
	podDefaults                controllers.PodDefaults
	pullPolicy                 string
	zap                        zap.Options
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "address of the Prometheus metrics endpoint (\"0\" disables it)")
	fs.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers the API server authenticates and authorizes (get on /metrics); false serves plain HTTP to anyone")
	fs.StringVar(&o.metricsCertDir, "metrics-cert-dir", "", "directory with tls.crt and tls.key for the metrics endpoint (default: a self-signed certificate)")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	fs.StringVar(&o.uiAddr, "ui-bind-address", "0", "address of the web view of the pools' stores, /pools/NAMESPACE/NAME/ (\"0\": not served)")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "elect a leader, so that only one of several replicas reconciles")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election lease (default: the pod's)")
	fs.Float64Var(&o.qps, "kube-api-qps", 200, "API server requests per second (client-side limit)")
	fs.IntVar(&o.burst, "kube-api-burst", 400, "API server request burst (client-side limit)")
	fs.IntVar(&o.orchestrationConcurrency, "orchestration-concurrency", 8, "Orchestrations reconciled at once")
	fs.DurationVar(&o.resync, "resync", 30*time.Second, "how often a running instance is re-read without a change report")
	fs.DurationVar(&o.poolStatusInterval, "pool-status-interval", 30*time.Second, "how often pool queue depths and counts are refreshed")
	fs.IntVar(&o.limits.Output, "max-output-bytes", 4096, "bytes of an instance's output copied into status (longer is cut, outputTruncated set)")
	fs.IntVar(&o.limits.CustomStatus, "max-custom-status-bytes", 1024, "bytes of custom status copied into status")
	fs.BoolVar(&o.podDefaults.HostNetwork, "worker-host-network", false, "run every pool's workers on the host network (clusters without a pod network)")
	fs.StringVar(&o.pullPolicy, "worker-image-pull-policy", "", "image pull policy of workers whose pool sets none (Always, IfNotPresent, Never)")
	o.zap.Development = false
	o.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.qps <= 0 || o.burst <= 0 || o.orchestrationConcurrency <= 0 {
		return o, fmt.Errorf("--kube-api-qps, --kube-api-burst and --orchestration-concurrency must be positive")
	}
	switch corev1.PullPolicy(o.pullPolicy) {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		o.podDefaults.ImagePullPolicy = corev1.PullPolicy(o.pullPolicy)
	default:
		return o, fmt.Errorf("--worker-image-pull-policy %q: want Always, IfNotPresent or Never", o.pullPolicy)
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	log := ctrl.Log.WithName("manager")
	if err := run(ctrl.SetupSignalHandler(), o, log); err != nil {
		log.Error(err, "manager stopped")
		os.Exit(1)
	}
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, v1.AddToScheme} {
		if err := add(s); err != nil {
			panic(fmt.Sprintf("build scheme: %v", err))
		}
	}
	return s
}

// metricsOptions serve the metrics endpoint as kubebuilder's layout does:
// HTTPS, each request's bearer token checked with the API server
// (TokenReview) and authorized for get on /metrics (SubjectAccessReview;
// config/rbac/metrics_reader_role.yaml grants it).
func metricsOptions(o options) metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.metricsSecure {
		m.SecureServing = true
		m.FilterProvider = filters.WithAuthenticationAndAuthorization
		m.CertDir = o.metricsCertDir
	}
	return m
}

func run(ctx context.Context, o options, log logr.Logger) (err error) {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	export, err := newOTLPExport(ctx)
	if err != nil {
		return err
	}
	defer func() {
		// The manager's context is done by now; the flush gets its own.
		flush, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(err, export.shutdown(flush))
	}()
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  newScheme(),
		Cache:                   controllers.CacheOptions(),
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "duroxide-operator.duroxide.io",
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// The Stores close their database pools on shutdown; the new leader
		// must not start before they are gone.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := controllers.Setup(ctx, mgr, controllers.Config{
		OrchestrationConcurrency: o.orchestrationConcurrency,
		Resync:                   o.resync,
		PoolStatusInterval:       o.poolStatusInterval,
		Limits:                   o.limits,
		PodDefaults:              o.podDefaults,
		UIAddr:                   o.uiAddr,
		Logger:                   slog.New(logr.ToSlogHandler(log.WithName("stores"))),
		Interceptors:             export.interceptors(),
	}); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	log.Info("starting", "leaderElect", o.leaderElect, "qps", o.qps, "burst", o.burst,
		"otlpMetrics", export.meters != nil, "otlpSpans", export.tracer != nil)
	return mgr.Start(ctx)
}
