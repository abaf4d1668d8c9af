package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// countingStore counts the work its dispatchers fetch; it hides the store's
// shortcut interfaces, so the runtime takes the plain paths.
type countingStore struct {
	testStore
	turnsFetched, activitiesFetched atomic.Int64
}

func (s *countingStore) FetchOrchestrationItems(ctx context.Context, max int, lock, poll time.Duration) ([]*provider.OrchestrationItem, error) {
	items, err := s.testStore.FetchOrchestrationItems(ctx, max, lock, poll)
	s.turnsFetched.Add(int64(len(items)))
	return items, err
}

func (s *countingStore) FetchWorkItem(ctx context.Context, lock, poll time.Duration) (*provider.WorkItemLease, error) {
	lease, err := s.testStore.FetchWorkItem(ctx, lock, poll)
	if lease != nil {
		s.activitiesFetched.Add(1)
	}
	return lease, err
}

// shortcutStore is countingStore with the store's shortcuts exposed.
type shortcutStore struct{ *countingStore }

func (s shortcutStore) AckOrchestrationItemLeasing(ctx context.Context, token string, ack provider.OrchestrationAck, lease []int, lock time.Duration) ([]*provider.WorkItemLease, error) {
	return s.testStore.(provider.ActivityLeaser).AckOrchestrationItemLeasing(ctx, token, ack, lease, lock)
}

func (s shortcutStore) AckWorkItemContinuing(ctx context.Context, token string, completion provider.WorkItem, lock time.Duration) (*provider.OrchestrationItem, error) {
	return s.testStore.(provider.ActivityContinuer).AckWorkItemContinuing(ctx, token, completion, lock)
}

func (s shortcutStore) EnqueueForOrchestratorFetching(ctx context.Context, item provider.WorkItem, lock time.Duration) (*provider.OrchestrationItem, error) {
	return s.testStore.(provider.EagerStarter).EnqueueForOrchestratorFetching(ctx, item, lock)
}

// TestShortcutsSaveFetches runs instances of a two-activity orchestration
// one after another, started with the runtime's client: with the store's
// shortcuts nothing is fetched (the start locks the instance for its first
// turn, activities are leased with the turn that schedules them, and each
// completion brings the next turn back); without them every turn and every
// activity is fetched. Outputs are the same.
func TestShortcutsSaveFetches(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		for _, shortcuts := range []bool{true, false} {
			t.Run(fmt.Sprintf("shortcuts=%v", shortcuts), func(t *testing.T) {
				counting := &countingStore{testStore: store}
				var p provider.Provider = counting
				if shortcuts {
					p = shortcutStore{counting}
				}
				reg := runtime.NewRegistry()
				runtime.RegisterActivity(reg, "Add", func(_ context.Context, n int) (int, error) { return n + 1, nil })
				runtime.RegisterOrchestration(reg, "Twice", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
					n, err := runtime.Await[int](ctx.CallActivity("Add", n))
					if err != nil {
						return 0, err
					}
					return runtime.Await[int](ctx.CallActivity("Add", n))
				})
				client := startRuntime(t, p, reg, fastOptions()).Client()
				const n = 10
				for i := range n {
					id := fmt.Sprintf("twice-%v-%d", shortcuts, i)
					if err := client.Start(t.Context(), id, "Twice", i); err != nil {
						t.Fatal(err)
					}
					st := wait(t, client, id)
					if st.Status != runtime.StatusCompleted || st.Output != fmt.Sprint(i+2) {
						t.Fatalf("%s: %s %q %v, want Completed %d", id, st.Status, st.Output, st.Failure, i+2)
					}
				}
				turns, activities := counting.turnsFetched.Load(), counting.activitiesFetched.Load()
				wantTurns, wantActivities := int64(3*n), int64(2*n)
				if shortcuts {
					wantTurns, wantActivities = 0, 0
				}
				if turns != wantTurns || activities != wantActivities {
					t.Fatalf("fetched %d turns and %d activities for %d instances, want %d and %d", turns, activities, n, wantTurns, wantActivities)
				}
			})
		}
	})
}

// unfetchedStore is shortcutStore whose dispatchers never fetch a turn:
// only the shortcuts bring turns.
type unfetchedStore struct{ shortcutStore }

func (s unfetchedStore) FetchOrchestrationItems(ctx context.Context, _ int, _, poll time.Duration) ([]*provider.OrchestrationItem, error) {
	select {
	case <-ctx.Done():
	case <-time.After(poll):
	}
	return nil, nil
}

// TestEagerStartFallsBack: the runtime's client runs a first turn here when
// it can; it queues the start plainly, for any dispatcher to fetch, when
// this runtime has no code for the orchestration or the start carries an
// event.
func TestEagerStartFallsBack(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		reg := runtime.NewRegistry()
		runtime.RegisterOrchestration(reg, "Greet", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return "hi", nil
		})
		client := startRuntime(t, unfetchedStore{shortcutStore{&countingStore{testStore: store}}}, reg, fastOptions()).Client()
		if err := client.Start(t.Context(), "eager", "Greet", struct{}{}); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, client, "eager"); st.Status != runtime.StatusCompleted || st.Output != `"hi"` {
			t.Fatalf("eager: %s %q %v, want Completed \"hi\" with no turn fetched", st.Status, st.Output, st.Failure)
		}
		if err := client.Start(t.Context(), "with-event", "Greet", struct{}{}, runtime.StartWithEvent("name", "ada")); err != nil {
			t.Fatal(err)
		}
		if err := client.Start(t.Context(), "elsewhere", "Elsewhere", struct{}{}); err != nil {
			t.Fatal(err)
		}
		queued := map[string][]provider.WorkItemKind{}
		for range 2 {
			item, err := store.FetchOrchestrationItem(t.Context(), time.Minute, 0)
			if err != nil || item == nil {
				t.Fatalf("fetch a plainly queued start: %v %v", item, err)
			}
			for _, m := range item.Messages {
				queued[item.Instance] = append(queued[item.Instance], m.Kind)
			}
		}
		want := map[string][]provider.WorkItemKind{
			"with-event": {provider.WorkStartOrchestration, provider.WorkExternalRaised},
			"elsewhere":  {provider.WorkStartOrchestration},
		}
		if fmt.Sprint(queued) != fmt.Sprint(want) {
			t.Fatalf("queued for any dispatcher: %v, want %v", queued, want)
		}
	})
}
