package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// TestLocalActivitiesCommitWithTheTurn: an orchestration whose activity runs
// WithLocal, started through the runtime's client, completes in one commit
// of one turn: no work item, nothing fetched. A store that could commit the
// first turn as the start is not asked to: Start does not wait for local
// activities, so the turn runs eagerly in a turn slot. The history records
// the activity as any other.
func TestLocalActivitiesCommitWithTheTurn(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			onEachStore(t, func(t *testing.T, store testStore) { localActivitiesCommitWithTheTurn(t, store, direct) })
		})
	}
}

func localActivitiesCommitWithTheTurn(t *testing.T, store testStore, direct bool) {
	counting := &pathStore{testStore: store, allow: shortcutPaths}
	if direct {
		counting.allow |= pathDirectStart
	}
	var local atomic.Int64
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Greet", func(ctx context.Context, name string) (string, error) {
		if info, ok := runtime.ActivityInfoFrom(ctx); ok && info.Local {
			local.Add(1)
		}
		return "Hello, " + name, nil
	})
	runtime.RegisterOrchestration(reg, "Hello", func(ctx *runtime.OrchestrationContext, name string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Greet", name, runtime.WithLocal()))
	})
	client := startRuntime(t, counting, reg, fastOptions()).Client()
	const n = 10
	for i := range n {
		id := fmt.Sprintf("local-%d", i)
		if err := client.Start(t.Context(), id, "Hello", id); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, client, id); st.Status != runtime.StatusCompleted || st.Output != `"Hello, `+id+`"` {
			t.Fatalf("%s: %s %q %v", id, st.Status, st.Output, st.Failure)
		}
	}
	acks, first, turns, acts := counting.turnAcks.Load(), counting.firstTurns.Load(), counting.turnsFetched.Load(), counting.activitiesFetched.Load()
	if acks != n || first != 0 || turns != 0 || acts != 0 {
		t.Fatalf("%d instances took %d acks, %d first-turn commits, %d fetched turns, %d fetched activities; want %d, 0, 0, 0",
			n, acks, first, turns, acts, n)
	}
	if got := local.Load(); got != n {
		t.Fatalf("%d activities saw ActivityInfo.Local, want %d", got, n)
	}
	history, err := client.History(t.Context(), "local-0")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range history {
		kinds = append(kinds, string(e.Kind))
	}
	if got := strings.Join(kinds, ","); got != "OrchestrationStarted,ActivityScheduled,ActivityCompleted,OrchestrationCompleted" {
		t.Fatalf("history %s", got)
	}
}

// TestLocalActivityInterruptedByShutdown: a local activity still running when
// shutdown cancels it records nothing; the turn is handed back without
// counting an attempt, and the next runtime runs it again to completion.
func TestLocalActivityInterruptedByShutdown(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		register := func(activity func(ctx context.Context, _ struct{}) (string, error)) *runtime.Registry {
			reg := runtime.NewRegistry()
			runtime.RegisterActivity(reg, "Work", activity)
			runtime.RegisterOrchestration(reg, "Job", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
				return runtime.Await[string](ctx.CallActivity("Work", struct{}{}, runtime.WithLocal()))
			})
			return reg
		}
		running := make(chan struct{})
		first := runtime.New(store, register(func(ctx context.Context, _ struct{}) (string, error) {
			close(running)
			<-ctx.Done()
			return "", ctx.Err()
		}), runtime.Options{Logger: quietLogger, DrainTimeout: 50 * time.Millisecond})
		if err := first.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := first.Client().Start(t.Context(), "job", "Job", struct{}{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-running:
		case <-time.After(30 * time.Second):
			t.Fatal("the local activity never started")
		}
		if err := first.Shutdown(timeout(t, 30*time.Second)); err != nil {
			t.Fatal(err)
		}

		var attempt atomic.Int64
		second := startRuntime(t, store, register(func(ctx context.Context, _ struct{}) (string, error) {
			info, _ := runtime.ActivityInfoFrom(ctx)
			attempt.Store(int64(info.Attempt))
			return "done", nil
		}), fastOptions())
		st := wait(t, second.Client(), "job")
		if st.Status != runtime.StatusCompleted || st.Output != `"done"` {
			t.Fatalf("after the restart: %s %q %v, want Completed \"done\"", st.Status, st.Output, st.Failure)
		}
		if got := attempt.Load(); got != 1 {
			t.Fatalf("the rerun saw attempt %d, want 1: an interrupted turn counts no attempt", got)
		}
		history, err := second.Client().History(t.Context(), "job")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range history {
			if e.Kind == provider.EventActivityFailed {
				t.Fatalf("history records the interrupted run: %+v", e)
			}
		}
	})
}

// TestLocalActivityLeftToWorkersByOrchestrationOnlyRuntime: a runtime that
// runs no activities (ActivityConcurrency < 0) queues local activities for
// workers, as it queues any other.
func TestLocalActivityLeftToWorkersByOrchestrationOnlyRuntime(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		ranBy := make(chan string, 2)
		register := func(who string) *runtime.Registry {
			reg := runtime.NewRegistry()
			runtime.RegisterActivity(reg, "Where", func(ctx context.Context, _ struct{}) (string, error) {
				info, _ := runtime.ActivityInfoFrom(ctx)
				ranBy <- fmt.Sprintf("%s local=%v", who, info.Local)
				return who, nil
			})
			if who == "orchestrator" {
				runtime.RegisterOrchestration(reg, "Job", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
					return runtime.Await[string](ctx.CallActivity("Where", struct{}{}, runtime.WithLocal()))
				})
			}
			return reg
		}
		orchOnly := fastOptions()
		orchOnly.ActivityConcurrency = -1
		rt := startRuntime(t, store, register("orchestrator"), orchOnly)
		startRuntime(t, store, register("worker"), fastOptions())
		if err := rt.Client().Start(t.Context(), "job", "Job", struct{}{}); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, rt.Client(), "job"); st.Status != runtime.StatusCompleted || st.Output != `"worker"` {
			t.Fatalf("%s %q %v, want Completed by the worker", st.Status, st.Output, st.Failure)
		}
		if got := <-ranBy; got != "worker local=false" {
			t.Fatalf("the activity ran as %q, want on the worker through the queue", got)
		}
	})
}
