package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// TestTurnAckContinuesInstance: an orchestration that continues as new 5
// times queues a ContinueAsNew message for itself in each turn's commit.
// When the store can continue a turn from its ack, each of those messages
// comes back as the next turn and nothing is fetched; otherwise each is
// fetched. The output is the same.
func TestTurnAckContinuesInstance(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		for _, continuing := range []bool{true, false} {
			t.Run(fmt.Sprintf("continuing=%v", continuing), func(t *testing.T) {
				counting := &pathStore{testStore: store, allow: shortcutPaths}
				if continuing {
					counting.allow |= pathTurnNext
				}
				reg := runtime.NewRegistry()
				runtime.RegisterOrchestration(reg, "Countdown", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
					if n == 0 {
						return 42, nil
					}
					return 0, ctx.ContinueAsNew(n - 1)
				})
				client := startRuntime(t, counting, reg, fastOptions()).Client()
				id := fmt.Sprintf("countdown-%v", continuing)
				if err := client.Start(t.Context(), id, "Countdown", 5); err != nil {
					t.Fatal(err)
				}
				st := wait(t, client, id)
				if st.Status != runtime.StatusCompleted || st.Output != "42" {
					t.Fatalf("%s: %s %q %v, want Completed 42", id, st.Status, st.Output, st.Failure)
				}
				want := int64(5)
				if continuing {
					want = 0
				}
				if got := counting.turnsFetched.Load(); got != want {
					t.Fatalf("fetched %d turns for 5 continue-as-new turns, want %d", got, want)
				}
			})
		}
	})
}

// TestShortcutsSaveFetches runs instances of a two-activity orchestration
// one after another, started with the runtime's client: with the store's
// shortcuts nothing is fetched (the start locks the instance for its first
// turn, or commits that turn itself; activities are leased with the turn
// that schedules them, and each completion brings the next turn back);
// without them every turn and every activity is fetched. A direct start
// queues no start message at all. Outputs are the same.
func TestShortcutsSaveFetches(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		for _, shortcuts := range []string{"direct", "eager", "none"} {
			t.Run("shortcuts="+shortcuts, func(t *testing.T) {
				counting := &pathStore{testStore: store}
				switch shortcuts {
				case "direct":
					counting.allow = shortcutPaths | pathDirectStart
				case "eager":
					counting.allow = shortcutPaths
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
				client := startRuntime(t, counting, reg, fastOptions()).Client()
				const n = 10
				for i := range n {
					id := fmt.Sprintf("twice-%s-%d", shortcuts, i)
					if err := client.Start(t.Context(), id, "Twice", i); err != nil {
						t.Fatal(err)
					}
					st := wait(t, client, id)
					if st.Status != runtime.StatusCompleted || st.Output != fmt.Sprint(i+2) {
						t.Fatalf("%s: %s %q %v, want Completed %d", id, st.Status, st.Output, st.Failure, i+2)
					}
				}
				turns, activities, starts := counting.turnsFetched.Load(), counting.activitiesFetched.Load(), counting.messagesQueued.Load()
				wantTurns, wantActivities, wantStarts := int64(3*n), int64(2*n), int64(n)
				switch shortcuts {
				case "direct":
					wantTurns, wantActivities, wantStarts = 0, 0, 0
				case "eager":
					wantTurns, wantActivities = 0, 0
				}
				if turns != wantTurns || activities != wantActivities || starts != wantStarts {
					t.Fatalf("fetched %d turns and %d activities and queued %d starts for %d instances, want %d, %d and %d",
						turns, activities, starts, n, wantTurns, wantActivities, wantStarts)
				}
			})
		}
	})
}

// TestEagerStartFallsBack: the runtime's client runs a first turn here when
// it can (eagerly or directly); it queues the start plainly, for any
// dispatcher to fetch, when this runtime has no code for the orchestration
// or the start carries an event.
func TestEagerStartFallsBack(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			onEachStore(t, func(t *testing.T, store testStore) { eagerStartFallsBack(t, store, direct) })
		})
	}
}

func eagerStartFallsBack(t *testing.T, store testStore, direct bool) {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Greet", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		return "hi", nil
	})
	p := &pathStore{testStore: store, allow: shortcutPaths, unfetched: true}
	if direct {
		p.allow |= pathDirectStart
	}
	client := startRuntime(t, p, reg, fastOptions()).Client()
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
		item, err := provider.FetchOne(t.Context(), store, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
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
}

// TestDirectStartOfExistingInstanceIsRefused: a second Start of an
// instance that exists is refused by the store's direct start, then by its
// eager start, which checks the ID: it fails with ErrAlreadyExists, queues
// nothing, and the instance keeps its first run.
func TestDirectStartOfExistingInstanceIsRefused(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart}
		reg := runtime.NewRegistry()
		runtime.RegisterOrchestration(reg, "Echo", func(ctx *runtime.OrchestrationContext, in string) (string, error) {
			return in, nil
		})
		client := startRuntime(t, counting, reg, fastOptions()).Client()
		if err := client.Start(t.Context(), "x", "Echo", "first"); err != nil {
			t.Fatalf("start: %v", err)
		}
		if err := client.Start(t.Context(), "x", "Echo", "second"); !errors.Is(err, provider.ErrAlreadyExists) {
			t.Fatalf("second start: %v, want ErrAlreadyExists", err)
		}
		if st := wait(t, client, "x"); st.Status != runtime.StatusCompleted || st.Output != `"first"` {
			t.Fatalf("x: %s %q, want Completed \"first\"", st.Status, st.Output)
		}
		if got := counting.messagesQueued.Load(); got != 1 {
			t.Fatalf("%d starts tried in the store, want 1 (the refused second start)", got)
		}
		if d, err := store.GetQueueDepths(t.Context()); err != nil || d.Orchestrator+d.Locked+d.Delayed != 0 {
			t.Fatalf("queued after the refused start: %+v, %v", d, err)
		}
		history, err := client.History(t.Context(), "x")
		if err != nil {
			t.Fatal(err)
		}
		if len(history) != 2 {
			t.Fatalf("x's history has %d events, want the first run's 2", len(history))
		}
	})
}

// TestDirectStartNeedsNoTurnSlot: with every turn slot busy, a direct start
// still commits its first turn (the caller's goroutine computes it) instead
// of queuing the start behind the busy slots.
func TestDirectStartNeedsNoTurnSlot(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart}
		started, release := make(chan struct{}), make(chan struct{})
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Block", func(context.Context, struct{}) (string, error) {
			close(started)
			<-release
			return "released", nil
		})
		runtime.RegisterOrchestration(reg, "Hold", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.CallActivity("Block", struct{}{}, runtime.WithLocal()))
		})
		runtime.RegisterOrchestration(reg, "Greet", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return "hi", nil
		})
		opts := fastOptions()
		opts.OrchestrationConcurrency = 1
		client := startRuntime(t, counting, reg, opts).Client()
		if err := client.Start(t.Context(), "hold", "Hold", struct{}{}); err != nil {
			t.Fatal(err)
		}
		defer func() {
			close(release)
			if st := wait(t, client, "hold"); st.Status != runtime.StatusCompleted {
				t.Errorf("hold: %s %v", st.Status, st.Failure)
			}
		}()
		select {
		case <-started: // the only turn slot is held by hold's turn
		case <-time.After(30 * time.Second):
			t.Fatal("hold's local activity never started")
		}
		if err := client.Start(t.Context(), "greet", "Greet", struct{}{}); err != nil {
			t.Fatal(err)
		}
		st, err := client.Status(t.Context(), "greet")
		if err != nil {
			t.Fatal(err)
		}
		if st.Status != runtime.StatusCompleted || st.Output != `"hi"` {
			t.Fatalf("greet right after Start: %s %q, want Completed \"hi\" (its first turn committed by Start)", st.Status, st.Output)
		}
		if got := counting.messagesQueued.Load(); got != 1 {
			t.Fatalf("%d start messages queued, want 1 (hold's eager start only)", got)
		}
	})
}

// TestActivityAckContinuesWhileTurnSlotsAreBusy: an activity that completes
// while every turn slot is busy still continues its orchestration from its
// ack: the turn waits here, locked, for a slot, and nothing is fetched.
func TestActivityAckContinuesWhileTurnSlotsAreBusy(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		counting := &pathStore{testStore: store, allow: shortcutPaths | pathDirectStart}
		holding, release, added := make(chan struct{}, 2), make(chan struct{}), make(chan struct{}, 1)
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Block", func(context.Context, struct{}) (string, error) {
			holding <- struct{}{}
			<-release
			return "released", nil
		})
		runtime.RegisterActivity(reg, "Add", func(_ context.Context, n int) (int, error) {
			added <- struct{}{}
			return n + 1, nil
		})
		runtime.RegisterOrchestration(reg, "Hold", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.CallActivity("Block", struct{}{}, runtime.WithLocal()))
		})
		runtime.RegisterOrchestration(reg, "Once", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
			return runtime.Await[int](ctx.CallActivity("Add", n))
		})
		opts := fastOptions()
		opts.OrchestrationConcurrency = 2
		client := startRuntime(t, counting, reg, opts).Client()
		for _, id := range []string{"hold-1", "hold-2"} {
			if err := client.Start(t.Context(), id, "Hold", struct{}{}); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			select {
			case <-holding: // a turn slot is held by a hold's turn
			case <-time.After(30 * time.Second):
				t.Fatal("a hold's local activity never started")
			}
		}
		if err := client.Start(t.Context(), "once", "Once", 1); err != nil {
			t.Fatal(err)
		}
		<-added
		time.Sleep(100 * time.Millisecond) // let the ack of Add's result commit while both slots are held
		close(release)
		if st := wait(t, client, "once"); st.Status != runtime.StatusCompleted || st.Output != "2" {
			t.Fatalf("once: %s %q %v, want Completed 2", st.Status, st.Output, st.Failure)
		}
		for _, id := range []string{"hold-1", "hold-2"} {
			if st := wait(t, client, id); st.Status != runtime.StatusCompleted {
				t.Fatalf("%s: %s %v", id, st.Status, st.Failure)
			}
		}
		if got := counting.turnsFetched.Load(); got != 0 {
			t.Fatalf("%d turns fetched, want 0: once's second turn was to come with its activity's ack", got)
		}
	})
}
