package runtime_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

// noQuietStore is every interface both stores offer but provider.QuietAcker.
type noQuietStore interface {
	testStore
	provider.Workers
	provider.ActivityLeaser
	provider.ActivityContinuer
	provider.EagerStarter
	provider.FirstTurnCommitter
	provider.TurnContinuer
	provider.CachedTurnCommitter
}

// fullStore is every interface both stores offer.
type fullStore interface {
	noQuietStore
	provider.QuietAcker
}

// turnCounter counts the turns a runtime runs on a store: each item it
// gets (fetched, continued from an ack, locked by a start) and each turn
// committed from the cache or as a direct start; and the quiet acks.
type turnCounter struct {
	fullStore
	turns, fetched, cached, quiet atomic.Int64
}

func (s *turnCounter) got(items ...*provider.OrchestrationItem) {
	for _, item := range items {
		if item == nil {
			continue
		}
		s.turns.Add(1)
		if !item.Cached {
			s.fetched.Add(1)
		}
	}
}

func (s *turnCounter) Fetch(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	items, err := s.fullStore.Fetch(ctx, req)
	s.got(items...)
	return items, err
}

func (s *turnCounter) AckWorkItemContinuing(ctx context.Context, token string, completion provider.WorkItem, lock time.Duration) (*provider.OrchestrationItem, error) {
	item, err := s.fullStore.AckWorkItemContinuing(ctx, token, completion, lock)
	s.got(item)
	return item, err
}

func (s *turnCounter) AckOrchestrationItemContinuing(ctx context.Context, instance, token string, ack provider.OrchestrationAck,
	lease []int, activityLock, lock time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error) {
	leases, item, err := s.fullStore.AckOrchestrationItemContinuing(ctx, instance, token, ack, lease, activityLock, lock)
	s.got(item)
	return leases, item, err
}

func (s *turnCounter) StartInstanceFetching(ctx context.Context, start provider.WorkItem, reuse provider.IDReusePolicy, lock time.Duration) (*provider.OrchestrationItem, error) {
	item, err := s.fullStore.StartInstanceFetching(ctx, start, reuse, lock)
	s.got(item)
	return item, err
}

func (s *turnCounter) CommitFirstTurn(ctx context.Context, instance string, ack provider.OrchestrationAck, lease []int, lock time.Duration) (bool, []*provider.WorkItemLease, error) {
	created, leases, err := s.fullStore.CommitFirstTurn(ctx, instance, ack, lease, lock)
	if created {
		s.turns.Add(1)
	}
	return created, leases, err
}

func (s *turnCounter) CommitCachedTurn(ctx context.Context, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck,
	lease []int, lock time.Duration) ([]*provider.WorkItemLease, error) {
	leases, err := s.fullStore.CommitCachedTurn(ctx, workToken, turn, ack, lease, lock)
	if err == nil && workToken != "" {
		s.turns.Add(1) // an activity's cached turn; a timer's was counted when fetched
		s.cached.Add(1)
	}
	return leases, err
}

func (s *turnCounter) AckWorkItemQuietly(ctx context.Context, token string, completion provider.WorkItem, lastEvent int64) (bool, error) {
	quiet, err := s.fullStore.AckWorkItemQuietly(ctx, token, completion, lastEvent)
	if quiet {
		s.quiet.Add(1)
	}
	return quiet, err
}

// noQuiet hides the counter's QuietAcker: every result wakes its instance.
type noQuiet struct{ noQuietStore }

// BenchmarkFanOutTurns measures what quiet acks save with dispatchers
// fetching as they always do: each op runs 10 fan-outs of 5 activities
// whose results come 20 ms apart, and reports turns (and fetched turns,
// cached turns, quiet acks) per fan-out, with quiet acks and without.
func BenchmarkFanOutTurns(b *testing.B) {
	stores := map[string]func(b *testing.B) fullStore{"sqlite": openSQLiteDefaults, "postgres": openPostgresDefaults}
	for _, name := range []string{"sqlite", "postgres"} {
		for _, quiet := range []bool{true, false} {
			b.Run(fmt.Sprintf("store=%s/quiet=%v", name, quiet), func(b *testing.B) {
				counter := &turnCounter{fullStore: stores[name](b)}
				var p provider.Provider = counter
				if !quiet {
					p = noQuiet{counter}
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
				rt := runtime.New(p, reg, runtime.Options{Logger: quietLogger})
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
				b.ReportMetric(float64(counter.quiet.Load())/per, "quietacks/fanout")
			})
		}
	}
}

// The stores with their default poll intervals: a dispatcher's poll finds
// results acked quietly, so the interval decides what quiet acks save.
func openSQLiteDefaults(b *testing.B) fullStore {
	store, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "store.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return store
}

func openPostgresDefaults(b *testing.B) fullStore {
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
