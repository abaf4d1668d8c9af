package runtime_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

// BenchmarkFanOutTurns measures what quiet acks save with dispatchers
// fetching as they always do: each op runs 10 fan-outs of 5 activities
// whose results come 20 ms apart, and reports turns (and fetched turns,
// cached turns, quiet acks) per fan-out, with quiet acks and without.
func BenchmarkFanOutTurns(b *testing.B) {
	stores := map[string]func(b *testing.B) testStore{"sqlite": openSQLiteDefaults, "postgres": openPostgresDefaults}
	for _, name := range []string{"sqlite", "postgres"} {
		for _, quiet := range []bool{true, false} {
			b.Run(fmt.Sprintf("store=%s/quiet=%v", name, quiet), func(b *testing.B) {
				counter := &pathStore{testStore: stores[name](b), allow: allPaths}
				if !quiet {
					counter.allow &^= pathQuiet
				}
				reg := runtime.NewRegistry()
				runtime.RegisterActivity(reg, "Nap", func(_ context.Context, i int) (int, error) {
					time.Sleep(time.Duration(i) * 20 * time.Millisecond)
					return i, nil
				})
				runtime.RegisterOrchestration(reg, "Fan5", func(ctx *runtime.OrchestrationContext, _ struct{}) (int, error) {
					fs := make([]*runtime.Future, 5)
					for i := range fs {
						fs[i] = ctx.CallActivity("Nap", i)
					}
					return 0, ctx.WhenAll(fs...)
				})
				rt := runtime.New(counter, reg, runtime.Options{Logger: quietLogger})
				if err := rt.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = rt.Shutdown(context.Background()) })
				client := rt.Client()
				const fans = 10
				b.ResetTimer()
				for n := range b.N {
					for i := range fans {
						if err := client.Start(b.Context(), fmt.Sprintf("fan-%d-%d", n, i), "Fan5", nil); err != nil {
							b.Fatal(err)
						}
					}
					for i := range fans {
						if _, err := client.Wait(b.Context(), fmt.Sprintf("fan-%d-%d", n, i)); err != nil {
							b.Fatal(err)
						}
					}
				}
				per := float64(b.N * fans)
				b.ReportMetric(float64(counter.turns.Load())/per, "turns/fanout")
				b.ReportMetric(float64(counter.fetched.Load())/per, "fetched/fanout")
				b.ReportMetric(float64(counter.cached.Load())/per, "cached/fanout")
				b.ReportMetric(float64(counter.quietAcks.Load())/per, "quietacks/fanout")
			})
		}
	}
}

// The stores with their default poll intervals: a dispatcher's poll finds
// results acked quietly, so the interval decides what quiet acks save.
func openSQLiteDefaults(b *testing.B) testStore {
	store, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "store.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return store
}

func openPostgresDefaults(b *testing.B) testStore {
	store, err := postgres.Open(b.Context(), pgtest.URL(b), postgres.Options{Schema: pgtest.RandomSchema()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = store.DropSchema(context.Background())
		_ = store.Close()
	})
	return store
}
