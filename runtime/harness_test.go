package runtime_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// fastOptions keep retries and leases short so failure paths run in seconds.
func fastOptions() runtime.Options {
	return runtime.Options{
		Logger: quietLogger, PollTimeout: 200 * time.Millisecond,
		RetryBackoff: 20 * time.Millisecond, MaxRetryBackoff: 100 * time.Millisecond,
	}
}

// testStore is what both providers offer.
type testStore interface {
	provider.Provider
	provider.Admin
}

// onEachStore runs test on SQLite and on PostgreSQL, as subtests.
func onEachStore(t *testing.T, test func(t *testing.T, store testStore)) {
	t.Run("sqlite", func(t *testing.T) { test(t, openStore(t, "")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgtest.Open(t)) })
}

func openStore(t testing.TB, path string) *sqlite.Provider {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "store.db")
	}
	store, err := sqlite.Open(t.Context(), path, sqlite.Options{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// startRuntime runs reg on store until the test ends.
func startRuntime(t *testing.T, store provider.Provider, reg *runtime.Registry, opts runtime.Options) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(store, reg, opts)
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	return rt
}

func wait(t *testing.T, c *runtime.Client, instance string) *runtime.Status {
	t.Helper()
	st, err := c.Wait(timeout(t, time.Minute), instance)
	if err != nil {
		t.Fatalf("wait for %s: %v", instance, err)
	}
	return st
}

// timeout is the test's context, ended after d.
func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// gatedRegistry registers orchestration "Gated", which calls activity
// "Gate" once: the activity closes started when it runs and returns "late"
// once release is closed, whatever its context says.
func gatedRegistry() (reg *runtime.Registry, started, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	reg = runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Gate", func(context.Context, struct{}) (string, error) {
		close(started)
		<-release
		return "late", nil
	})
	runtime.RegisterOrchestration(reg, "Gated", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Gate", nil))
	})
	return reg, started, release
}
