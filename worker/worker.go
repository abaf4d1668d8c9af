package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/runtime"
)

// Worker is one worker process of a pool.
type Worker struct {
	reg    *runtime.Registry
	cfg    Config
	logger *slog.Logger
	// Open opens the store (default: postgres.Open with the config's URL and
	// schema). Run retries its errors, except those wrapping
	// postgres.ErrInvalidConnString or postgres.ErrInvalidSchema, which it returns.
	Open func(ctx context.Context) (provider.Provider, error)
	// Interceptors wrap the runtime's turns and activities after the
	// worker's own (tracing, when Exporters gives a span exporter).
	Interceptors []runtime.Interceptor
	// Exporters supplies OpenTelemetry exporters beyond the Prometheus
	// endpoint (default none): metric readers, and a span exporter, which
	// turns tracing on (telemetry.Tracing). The otlp module's FromEnv
	// exports over OTLP when the standard OTEL_EXPORTER_OTLP_* variables
	// are set; cmd/sample-worker uses it.
	Exporters func(ctx context.Context) (metrics []sdkmetric.Reader, spans sdktrace.SpanExporter, err error)

	metricsRegistry *prometheus.Registry
	meters          atomic.Pointer[sdkmetric.MeterProvider]
	ready           atomic.Bool
	listening       chan struct{}
	health          net.Addr
	metrics         net.Addr
}

// New returns a worker for reg's orchestrations and activities.
func New(reg *runtime.Registry, cfg Config, logger *slog.Logger) *Worker {
	if logger == nil {
		logger = slog.Default()
	}
	cfg = cfg.withDefaults()
	w := &Worker{reg: reg, cfg: cfg, logger: logger, listening: make(chan struct{}), metricsRegistry: prometheus.NewRegistry()}
	w.Open = func(ctx context.Context) (provider.Provider, error) {
		return postgres.Open(ctx, cfg.PostgresURL, postgres.Options{Schema: cfg.Schema, Logger: logger, MeterProvider: w.MeterProvider()})
	}
	return w
}

// Run runs the worker until ctx ends (SIGTERM), then drains: no new work is
// fetched, in-flight activities get DrainTimeout to finish, and what is still
// running then is handed back to the store so another worker takes it at once.
func Run(ctx context.Context, reg *runtime.Registry, cfg Config, logger *slog.Logger) error {
	return New(reg, cfg, logger).Run(ctx)
}

// Run: see the package function Run.
func (w *Worker) Run(ctx context.Context) error {
	tel, err := w.newTelemetry(ctx, w.metricsRegistry)
	if err != nil {
		return err
	}
	w.meters.Store(tel.meters)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tel.shutdown(sctx); err != nil {
			w.logger.Warn("flushing telemetry failed", "error", err.Error())
		}
	}()
	stopServers, err := w.serve()
	if err != nil {
		return err
	}
	defer stopServers()
	p, err := w.openStore(ctx)
	if err != nil {
		return err // a configuration error, or ctx ended first: nothing to drain
	}
	defer func() { _ = p.Close() }()
	rt := runtime.New(p, w.reg, w.runtimeOptions(tel))
	if err := rt.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start dispatchers: %w", err)
	}
	w.ready.Store(true)
	w.logger.Info("worker ready", "pool", w.cfg.Pool, "worker", w.cfg.WorkerID, "schema", w.cfg.Schema)
	<-ctx.Done()
	w.ready.Store(false)
	w.logger.Info("draining", "timeout", w.cfg.DrainTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), w.cfg.DrainTimeout+5*time.Second)
	defer cancel()
	if err := rt.Shutdown(sctx); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	w.logger.Info("drained")
	return nil
}

func (w *Worker) runtimeOptions(tel *workerTelemetry) runtime.Options {
	return runtime.Options{
		MeterProvider:            tel.meters,
		Interceptors:             append(tel.interceptors[:len(tel.interceptors):len(tel.interceptors)], w.Interceptors...),
		OrchestrationConcurrency: w.cfg.OrchestrationConcurrency,
		ActivityConcurrency:      w.cfg.ActivityConcurrency,
		ActivityTags:             w.cfg.ActivityTags,
		MaxSessions:              w.cfg.MaxSessions,
		SessionLockTimeout:       w.cfg.SessionLockTimeout,
		SessionIdleTimeout:       w.cfg.SessionIdleTimeout,
		OrchestrationLockTimeout: w.cfg.LockTimeout,
		ActivityLockTimeout:      w.cfg.LockTimeout,
		DrainTimeout:             w.cfg.DrainTimeout,
		Logger:                   w.logger,
		WorkerID:                 w.cfg.WorkerID,
	}
}

// openStore retries until the store is reachable or ctx ends: a database
// that is briefly away keeps the pod alive but not ready, instead of in a
// crash loop. The retries stay frequent (at most openRetryMax apart): with no
// connection there is no listener to say the database is back, and a worker
// started during an outage should be ready soon after it ends. The outage
// is logged once, and its end once. A configuration error is returned at
// once: no retry fixes it, and the process exiting with it puts the reason
// in the pod's log and its crash loop in the pod's status.
func (w *Worker) openStore(ctx context.Context) (provider.Provider, error) {
	backoff := openRetryMin
	began := time.Now()
	for attempt := 1; ; attempt++ {
		p, err := w.Open(ctx)
		if err == nil {
			if attempt > 1 {
				w.logger.Info("store reachable", "after", time.Since(began).Round(time.Millisecond).String(), "attempts", attempt)
			}
			return p, nil
		}
		if isConfigError(err) {
			return nil, err
		}
		if attempt == 1 {
			w.logger.Warn("store not reachable; retrying", "error", err.Error(), "retryEvery", openRetryMax.String())
		} else {
			w.logger.Debug("store still not reachable", "error", err.Error(), "attempt", attempt)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("open store: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, openRetryMax)
	}
}

// isConfigError reports whether err comes from the store's settings, which
// only a new deployment changes: a connection string or schema name that can
// never work.
func isConfigError(err error) bool {
	return errors.Is(err, postgres.ErrInvalidConnString) || errors.Is(err, postgres.ErrInvalidSchema)
}

const (
	openRetryMin = 200 * time.Millisecond
	openRetryMax = 2 * time.Second
)

// serve starts the health and metrics endpoints.
func (w *Worker) serve() (stop func(), err error) {
	hl, err := net.Listen("tcp", w.cfg.HealthAddr)
	if err != nil {
		return nil, fmt.Errorf("health endpoint %s: %w", w.cfg.HealthAddr, err)
	}
	w.health = hl.Addr()
	servers := []*http.Server{{Handler: w.healthHandler(), ReadHeaderTimeout: 5 * time.Second}}
	listeners := []net.Listener{hl}
	if w.cfg.MetricsAddr != "0" {
		ml, err := net.Listen("tcp", w.cfg.MetricsAddr)
		if err != nil {
			_ = hl.Close()
			return nil, fmt.Errorf("metrics endpoint %s: %w", w.cfg.MetricsAddr, err)
		}
		w.metrics = ml.Addr()
		servers = append(servers, &http.Server{Handler: w.metricsHandler(), ReadHeaderTimeout: 5 * time.Second})
		listeners = append(listeners, ml)
	}
	for i, s := range servers {
		go func() {
			if err := s.Serve(listeners[i]); err != nil && !errors.Is(err, http.ErrServerClosed) {
				w.logger.Error("endpoint stopped", "addr", listeners[i].Addr().String(), "error", err.Error())
			}
		}()
	}
	close(w.listening)
	return func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}, nil
}

// MeterProvider is where the worker's metrics go once Run has started (a
// no-op provider before): a custom Open passes it to the store it opens,
// so the store's metrics are served too.
func (w *Worker) MeterProvider() metric.MeterProvider {
	if mp := w.meters.Load(); mp != nil {
		return mp
	}
	return noop.NewMeterProvider()
}

// Addrs returns the health and metrics addresses once they listen (metrics
// is nil when disabled); it blocks until then.
func (w *Worker) Addrs() (health, metrics net.Addr) {
	<-w.listening
	return w.health, w.metrics
}

func (w *Worker) healthHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = rw.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, _ *http.Request) {
		if !w.ready.Load() {
			http.Error(rw, "not ready: connecting to the store or draining", http.StatusServiceUnavailable)
			return
		}
		_, _ = rw.Write([]byte("ok\n"))
	})
	return mux
}
