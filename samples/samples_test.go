package samples_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

// Every sample, end to end: a real runtime on a real SQLite file and on PostgreSQL.
func TestSamples(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "samples.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		runSamples(t, store)
	})
	t.Run("postgres", func(t *testing.T) { runSamples(t, pgtest.Open(t)) })
}

func runSamples(t *testing.T, store provider.Provider) {
	startRuntime(t, store)
	client := runtime.NewClient(store)
	for _, d := range samples.Demos() {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			// Unique per run: the Retry sample's stand-in service counts calls per instance.
			res := d.Run(t.Context(), client, fmt.Sprintf("sample-%s-%d", d.Orchestration, time.Now().UnixNano()), time.Minute)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
		})
	}
}

func TestApprovalTimesOutWithoutDecision(t *testing.T) {
	store, err := sqlite.OpenMemory(t.Context(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	startRuntime(t, store)
	client := runtime.NewClient(store)
	if err := client.Start(t.Context(), "late", "Approval", samples.ApprovalRequest{Item: "x", Timeout: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	st, err := client.Wait(timeout(t, time.Minute), "late")
	if err != nil {
		t.Fatal(err)
	}
	if st.Output != `"x: no decision within 200ms"` {
		t.Fatalf("output %s", st.Output)
	}
	if st.CustomStatus == nil || *st.CustomStatus != `{"item":"x","result":"expired"}` {
		t.Fatalf("custom status %v", st.CustomStatus)
	}
}

// startRuntime runs the samples on store until the test, subtests included, ends.
func startRuntime(t *testing.T, store provider.Provider) {
	t.Helper()
	t.Cleanup(func() { _ = store.Close() })
	reg := runtime.NewRegistry()
	samples.Register(reg)
	opts := runtime.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range []runtime.Options{opts, samples.GPUWorkerOptions(opts)} {
		rt := runtime.New(store, reg, o)
		if err := rt.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
	}
}

// timeout is the test's context, ended after d.
func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
