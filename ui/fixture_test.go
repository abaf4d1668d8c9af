package ui

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

// fixture is a SQLite store with a runtime running the samples and the
// test orchestrations below, and the view served over HTTP.
type fixture struct {
	store  provider.Provider
	client *runtime.Client
	srv    *httptest.Server
	// drifted makes Drift's code differ from its history: it stalls.
	drifted *atomic.Bool
}

// manyWaves and manyWidth shape Many: waves of concurrent activities,
// 2 events each, plus a zero timer every tenth wave.
const (
	manyWaves = 100
	manyWidth = 5
)

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ui.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	f := &fixture{store: store, client: runtime.NewClient(store), drifted: new(atomic.Bool)}
	reg := runtime.NewRegistry()
	samples.Register(reg)
	registerTestOrchestrations(reg, f.drifted)
	rt := runtime.New(store, reg, runtime.Options{RetryBackoff: 50 * time.Millisecond, MaxAttempts: 1000, Logger: slog.New(slog.DiscardHandler)})
	if err := rt.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	f.srv = httptest.NewServer(New(f.client, store, opts))
	t.Cleanup(f.srv.Close)
	return f
}

func registerTestOrchestrations(reg *runtime.Registry, drifted *atomic.Bool) {
	runtime.RegisterActivity(reg, "Step", func(_ context.Context, n int) (int, error) { return n + 1, nil })
	// Many runs manyWaves waves of manyWidth activities: a history of
	// over a thousand events.
	runtime.RegisterOrchestration(reg, "Many", func(ctx *runtime.OrchestrationContext, _ string) (int, error) {
		sum := 0
		for wave := range manyWaves {
			if wave%10 == 9 {
				if err := ctx.CreateTimer(0).Await(nil); err != nil {
					return 0, err
				}
			}
			futures := make([]*runtime.Future, manyWidth)
			for i := range futures {
				futures[i] = ctx.CallActivity("Step", wave*manyWidth+i)
			}
			if err := ctx.WhenAll(futures...); err != nil {
				return 0, err
			}
			sum += wave
		}
		return sum, nil
	})
	// Drift waits for "nudge"; with drifted set, its code calls an
	// activity first, which its history does not record.
	runtime.RegisterOrchestration(reg, "Drift", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		if drifted.Load() {
			return runtime.Await[string](ctx.CallActivity("Drifted", ""))
		}
		return runtime.Await[string](ctx.WaitForEvent("nudge"))
	})
}

// start starts an instance and waits until it has finished (wait) or run
// its first turn.
func (f *fixture) start(t *testing.T, id, orchestration string, input any, wait bool) *runtime.Status {
	t.Helper()
	if err := f.client.Start(t.Context(), id, orchestration, input); err != nil {
		t.Fatal(err)
	}
	return f.waitUntil(t, id, func(st *runtime.Status) bool {
		return st.Status != runtime.StatusPending && (!wait || st.Finished())
	})
}

func (f *fixture) waitUntil(t *testing.T, id string, cond func(*runtime.Status) bool) *runtime.Status {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := f.client.Status(t.Context(), id)
		if err != nil && !errors.Is(err, provider.ErrNotFound) {
			t.Fatal(err)
		}
		if err == nil && cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s: condition not met in 60s; status %+v", id, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stall makes a Drift instance stall on nondeterminism.
func (f *fixture) stall(t *testing.T, id string) {
	t.Helper()
	f.start(t, id, "Drift", "", false)
	f.drifted.Store(true)
	if err := f.client.RaiseEvent(t.Context(), id, "nudge", "x"); err != nil {
		t.Fatal(err)
	}
	f.waitUntil(t, id, (*runtime.Status).Stalled)
}
