package worker_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/worker"
)

type slowInput struct {
	Hold time.Duration `json:"hold"`
}

// A worker on a real PostgreSQL store: not ready until its dispatchers run,
// runs an instance, exports metrics, and on cancellation (SIGTERM) lets the
// in-flight activity finish before it returns.
func TestWorkerRunsReportsAndDrains(t *testing.T) {
	store := pgtest.Open(t)
	var finished atomic.Int32
	started := make(chan struct{}, 1)
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Slow", func(ctx context.Context, in slowInput) (string, error) {
		started <- struct{}{}
		time.Sleep(in.Hold)
		finished.Add(1)
		return "done", nil
	})
	runtime.RegisterOrchestration(reg, "UsesSlow", func(ctx *runtime.OrchestrationContext, in slowInput) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Slow", in))
	})
	cfg := worker.Config{Pool: "p", Schema: store.Schema(), HealthAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0",
		DrainTimeout: 10 * time.Second}
	w := worker.New(reg, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	opened := make(chan struct{})
	w.Open = func(ctx context.Context) (provider.Provider, error) {
		<-opened // hold the store back: the worker must not be ready yet
		return pgtest.OpenSchema(t, store.Schema()), nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	health, metrics := w.Addrs()
	if code := get(t, "http://"+health.String()+"/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz before the store opened: %d, want 503", code)
	}
	if code := get(t, "http://"+health.String()+"/healthz"); code != http.StatusOK {
		t.Fatalf("healthz: %d", code)
	}
	close(opened)
	waitReady(t, "http://"+health.String()+"/readyz")

	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "quick", "UsesSlow", slowInput{}); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(timeout(t, time.Minute), "quick"); err != nil || st.Output != `"done"` {
		t.Fatalf("quick instance: %+v %v", st, err)
	}
	<-started
	body := fetch(t, "http://"+metrics.String()+"/metrics")
	for _, want := range []string{"duroxide_worker_ready 1", `duroxide_turns_total{orchestration="UsesSlow",outcome="Completed"} 1`, "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	if err := c.Start(t.Context(), "slow", "UsesSlow", slowInput{Hold: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	<-started // the activity is in flight
	cancel()  // SIGTERM
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if n := finished.Load(); n != 2 {
		t.Fatalf("%d activities finished before Run returned, want 2 (the in-flight one drained)", n)
	}
	// The drained activity's result was committed: a new worker completes the instance.
	w2 := worker.New(reg, worker.Config{Schema: store.Schema(), HealthAddr: "127.0.0.1:0", MetricsAddr: "0"}, nil)
	w2.Open = func(context.Context) (provider.Provider, error) { return pgtest.OpenSchema(t, store.Schema()), nil }
	ctx2, cancel2 := context.WithCancel(t.Context())
	done2 := make(chan error, 1)
	go func() { done2 <- w2.Run(ctx2) }()
	defer func() { cancel2(); <-done2 }()
	if st, err := c.Wait(timeout(t, time.Minute), "slow"); err != nil || st.Output != `"done"` {
		t.Fatalf("slow instance: %+v %v", st, err)
	}
	if n := finished.Load(); n != 2 {
		t.Fatalf("the drained activity ran again: %d runs", n)
	}
}

// A worker whose store is unreachable keeps retrying (the outage is
// transient); when its context ends first it returns an error that says so.
// Neither the error nor the log shows the connection string.
func TestWorkerGivesUpWhenStoppedBeforeConnecting(t *testing.T) {
	cfg := worker.Config{PostgresURL: "postgres://u:s3cret@127.0.0.1:1/x?connect_timeout=1", Schema: "x",
		HealthAddr: "127.0.0.1:0", MetricsAddr: "0"}
	var logs lockedBuffer
	w := worker.New(runtime.NewRegistry(), cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	err := w.Run(ctx)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("run: %v", err)
	}
	out := logs.String()
	if strings.Count(out, "store still not reachable") < 2 || strings.Contains(out, "s3cret") {
		t.Fatalf("want retries logged without the password:\n%s", out)
	}
}

// A store URL that can never work stops the worker at once with the reason
// and without the password, so Kubernetes shows a crash loop with the cause
// in the log instead of a pod that is alive and never ready.
func TestWorkerStopsOnAnInvalidStoreURL(t *testing.T) {
	for name, tc := range map[string]struct{ url, cause string }{
		"bad port":       {"postgres://u:s3cret@127.0.0.1:port/db", "invalid port"},
		"unknown scheme": {"pg://u:s3cret@127.0.0.1/db", "unsupported scheme"},
		"bad option":     {"postgres://u:s3cret@127.0.0.1/db?sslmode=sometimes", "sslmode is invalid"},
		"keyword/value":  {"host=127.0.0.1 password=s3cret port=none", "invalid port"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := worker.Config{PostgresURL: tc.url, Schema: "x", HealthAddr: "127.0.0.1:0", MetricsAddr: "0"}
			w := worker.New(runtime.NewRegistry(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			began := time.Now()
			err := w.Run(ctx)
			if took := time.Since(began); took > 2*time.Second {
				t.Errorf("Run took %v, want an immediate stop", took.Round(time.Millisecond))
			}
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("run: %v, want the configuration error", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.cause) || strings.Contains(msg, "s3cret") {
				t.Fatalf("run: %q, want the cause %q and no password", msg, tc.cause)
			}
		})
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func fetch(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for get(t, url) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("worker never became ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// timeout is the test's context, ended after d.
func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// A worker started while the database is down becomes ready soon after the
// database is back, not after a backoff grown over the outage (it reached
// 30s before), and logs the outage once.
func TestWorkerReadySoonAfterStoreReturns(t *testing.T) {
	store := pgtest.Open(t)
	const outage = 8 * time.Second
	began := time.Now()
	var attempts atomic.Int32
	var logs lockedBuffer
	w := worker.New(runtime.NewRegistry(), worker.Config{Schema: store.Schema(), HealthAddr: "127.0.0.1:0", MetricsAddr: "0"},
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	w.Open = func(context.Context) (provider.Provider, error) {
		attempts.Add(1)
		if time.Since(began) < outage {
			return nil, errors.New("connection refused")
		}
		return pgtest.OpenSchema(t, store.Schema()), nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	health, _ := w.Addrs()
	waitReady(t, "http://"+health.String()+"/readyz")
	if late := time.Since(began) - outage; late > 3*time.Second {
		t.Fatalf("ready %v after the store came back (%d open attempts), want within 3s", late, attempts.Load())
	}
	out := logs.String()
	if n := strings.Count(out, "store not reachable"); n != 1 {
		t.Fatalf("the outage was logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "store reachable") {
		t.Fatalf("the outage's end was not logged:\n%s", out)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
