package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// Terminating a parent terminates its child, and the context of an activity
// running for the child is cancelled.
func TestTerminateCascadesAndCancelsActivities(t *testing.T) {
	onEachStore(t, testTerminateCascadesAndCancelsActivities)
}

func testTerminateCascadesAndCancelsActivities(t *testing.T, store testStore) {
	reg := runtime.NewRegistry()
	started := make(chan struct{})
	cancelled := make(chan struct{})
	runtime.RegisterActivity(reg, "Forever", func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return "", ctx.Err()
	})
	runtime.RegisterOrchestration(reg, "Child", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Forever", struct{}{}))
	})
	runtime.RegisterOrchestration(reg, "Parent", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		return runtime.Await[string](ctx.CallSubOrchestration("Child", struct{}{}, runtime.WithInstanceID("child")))
	})
	opts := fastOptions()
	opts.ActivityRenewInterval = 50 * time.Millisecond
	startRuntime(t, store, reg, opts)
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "parent", "Parent", nil); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := c.Terminate(t.Context(), "parent", "operator request"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"parent", "child"} {
		st := wait(t, c, id)
		if st.Status != runtime.StatusTerminated || !strings.Contains(st.Failure.Message, "terminated") {
			t.Fatalf("%s: status %s failure %+v", id, st.Status, st.Failure)
		}
	}
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the running activity's context was not cancelled")
	}
}

// With NondeterminismFail, code that no longer matches its history fails the
// instance with a configuration error that names what the history expected
// and what ran.
func TestNondeterminismFailsTheInstanceWhenAsked(t *testing.T) {
	onEachStore(t, testNondeterminismFailsTheInstance)
}

// By default a nondeterministic instance is kept and retried with backoff;
// rolling the code back resumes it.
func TestNondeterminismKeepsTheInstanceForARollback(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		var changed atomic.Bool
		var mismatches atomic.Int32
		gate := make(chan struct{})
		reg := runtime.NewRegistry()
		runtime.RegisterActivity(reg, "Slow", func(ctx context.Context, _ struct{}) (string, error) { <-gate; return "ok", nil })
		runtime.RegisterActivity(reg, "Other", func(ctx context.Context, _ struct{}) (string, error) { return "other", nil })
		runtime.RegisterOrchestration(reg, "Drifting", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			if changed.Load() {
				if ctx.IsReplaying() {
					mismatches.Add(1)
				}
				return runtime.Await[string](ctx.CallActivity("Other", nil))
			}
			return runtime.Await[string](ctx.CallActivity("Slow", nil))
		})
		opts := fastOptions()
		opts.MaxAttempts = 3
		startRuntime(t, store, reg, opts)
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "drift", "Drifting", nil); err != nil {
			t.Fatal(err)
		}
		waitForEvents(t, c, "drift", 2)
		changed.Store(true) // a bad deployment
		close(gate)
		deadline := time.Now().Add(time.Minute)
		for mismatches.Load() < int32(opts.MaxAttempts)+2 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		st, err := c.Status(t.Context(), "drift")
		if err != nil || st.Status != runtime.StatusRunning {
			t.Fatalf("after %d nondeterministic turns (poison limit %d): status %+v, %v; want Running", mismatches.Load(), opts.MaxAttempts, st, err)
		}
		if le := st.LastError; le == nil || le.Kind != runtime.FailureNondeterminism || le.Class != runtime.ErrorConfiguration ||
			!strings.Contains(le.Message, `"Other"`) {
			t.Fatalf("status of the stalled instance: last error %+v, want the nondeterminism naming the new call", le)
		}
		changed.Store(false) // the rollback
		if st := wait(t, c, "drift"); st.Status != runtime.StatusCompleted || st.Output != `"ok"` || st.LastError != nil {
			t.Fatalf("after the rollback: status %s output %s failure %+v last error %+v", st.Status, st.Output, st.Failure, st.LastError)
		}
	})
}

func testNondeterminismFailsTheInstance(t *testing.T, store testStore) {
	var changed atomic.Bool
	gate := make(chan struct{})
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Slow", func(ctx context.Context, _ struct{}) (string, error) { <-gate; return "ok", nil })
	runtime.RegisterActivity(reg, "Other", func(ctx context.Context, _ struct{}) (string, error) { return "ok", nil })
	runtime.RegisterOrchestration(reg, "Drifting", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		if changed.Load() { // a deployment changed the code under a running instance
			return runtime.Await[string](ctx.CallActivity("Other", nil))
		}
		return runtime.Await[string](ctx.CallActivity("Slow", nil))
	})
	opts := fastOptions()
	opts.Nondeterminism = runtime.NondeterminismFail
	startRuntime(t, store, reg, opts)
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "drift", "Drifting", nil); err != nil {
		t.Fatal(err)
	}
	waitForEvents(t, c, "drift", 2)
	changed.Store(true)
	close(gate)
	st := wait(t, c, "drift")
	t.Logf("failure: %s", st.Failure.Message)
	if st.Status != runtime.StatusFailed || st.Failure.Class != runtime.ErrorConfiguration ||
		!strings.Contains(st.Failure.Message, `expected ActivityScheduled "Slow", got ActivityScheduled "Other"`) {
		t.Fatalf("status %s failure %+v", st.Status, st.Failure)
	}
}

func waitForEvents(t *testing.T, c *runtime.Client, instance string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if h, _ := c.History(t.Context(), instance); len(h) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never reached %d history events", instance, n)
}

// An orchestration no running process registers waits, untouched, for a
// process that does: a fetch leaves what its build cannot run (no attempt
// is counted, so a deploy that brings the code late loses nothing).
func TestUnregisteredOrchestrationWaitsForItsCode(t *testing.T) {
	onEachStore(t, testUnregisteredOrchestrationWaitsForItsCode)
}

func testUnregisteredOrchestrationWaitsForItsCode(t *testing.T, store testStore) {
	opts := fastOptions()
	opts.MaxAttempts = 2
	startRuntime(t, store, runtime.NewRegistry(), opts)
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "ghost", "NotDeployed", "x"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // many polls of the runtime without the code
	if st, err := c.Status(t.Context(), "ghost"); err != nil || st.Status != runtime.StatusPending || st.LastError != nil {
		t.Fatalf("status without the code: %+v %v, want Pending and never tried", st, err)
	}
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "NotDeployed", func(_ *runtime.OrchestrationContext, in string) (string, error) { return in + "!", nil })
	startRuntime(t, store, reg, opts)
	if st := wait(t, c, "ghost"); st.Status != runtime.StatusCompleted || st.Output != `"x!"` {
		t.Fatalf("status once the code runs: %s %s %v", st.Status, st.Output, st.Failure)
	}
}

// An unregistered activity fails back to its orchestration at the poison limit.
func TestUnregisteredActivityFailsAtPoisonLimit(t *testing.T) {
	onEachStore(t, testUnregisteredActivityFailsAtPoisonLimit)
}

func testUnregisteredActivityFailsAtPoisonLimit(t *testing.T, store testStore) {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "CallsMissing", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		_, err := runtime.Await[string](ctx.CallActivity("Missing", nil))
		var te *runtime.TaskError
		if errors.As(err, &te) && te.Class == runtime.ErrorConfiguration {
			return "configuration error seen: " + te.Message, nil
		}
		return "", err
	})
	opts := fastOptions()
	opts.MaxAttempts = 3
	startRuntime(t, store, reg, opts)
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "m", "CallsMissing", nil); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c, "m"); !strings.Contains(st.Output, `activity \"Missing\" is not registered`) {
		t.Fatalf("status %s output %s failure %+v", st.Status, st.Output, st.Failure)
	}
}

// An activity that runs for several lease lengths keeps its lease by renewal
// and runs once.
func TestLongActivityKeepsItsLease(t *testing.T) { onEachStore(t, testLongActivityKeepsItsLease) }

func testLongActivityKeepsItsLease(t *testing.T, store testStore) {
	var runs atomic.Int32
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Long", func(ctx context.Context, _ struct{}) (string, error) {
		runs.Add(1)
		time.Sleep(1500 * time.Millisecond)
		return "done", nil
	})
	runtime.RegisterOrchestration(reg, "UsesLong", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Long", nil))
	})
	opts := fastOptions()
	opts.ActivityLockTimeout, opts.ActivityRenewInterval = 400*time.Millisecond, 100*time.Millisecond
	startRuntime(t, store, reg, opts)
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "long", "UsesLong", nil); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c, "long"); st.Output != `"done"` || runs.Load() != 1 {
		t.Fatalf("output %s after %d runs; want \"done\" after 1", st.Output, runs.Load())
	}
}

// Shutdown cancels an activity still running after the drain timeout and hands
// its item back without counting an attempt; another runtime finishes it.
func TestShutdownHandsBackRunningActivities(t *testing.T) {
	onEachStore(t, testShutdownHandsBackRunningActivities)
}

func testShutdownHandsBackRunningActivities(t *testing.T, store testStore) {
	firstStarted := make(chan struct{})
	var mu sync.Mutex
	var attempts []int
	reg := func(block bool) *runtime.Registry {
		r := runtime.NewRegistry()
		runtime.RegisterActivity(r, "Work", func(ctx context.Context, _ struct{}) (string, error) {
			info, _ := runtime.ActivityInfoFrom(ctx)
			mu.Lock()
			attempts = append(attempts, info.Attempt)
			mu.Unlock()
			if block {
				close(firstStarted)
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "finished elsewhere", nil
		})
		runtime.RegisterOrchestration(r, "DoWork", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.CallActivity("Work", nil))
		})
		return r
	}
	opts := fastOptions()
	opts.DrainTimeout = 100 * time.Millisecond
	first := runtime.New(store, reg(true), opts)
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "w", "DoWork", nil); err != nil {
		t.Fatal(err)
	}
	<-firstStarted
	if err := first.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	startRuntime(t, store, reg(false), fastOptions())
	if st := wait(t, c, "w"); st.Output != `"finished elsewhere"` {
		t.Fatalf("output %s failure %+v", st.Output, st.Failure)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) != 2 || attempts[1] != 1 {
		t.Fatalf("attempts seen %v; want [1 1]: the handed-back item must not count an attempt", attempts)
	}
}

// Shutdown returns after the drain timeout even while an activity ignores
// its cancelled context: the activity's function runs on a goroutine
// Shutdown does not wait for.
func TestShutdownOutlivesAnActivityThatIgnoresCancellation(t *testing.T) {
	store := openStore(t, "")
	reg, started, release := gatedRegistry()
	defer close(release)
	opts := fastOptions()
	opts.DrainTimeout = 50 * time.Millisecond
	rt := runtime.New(store, reg, opts)
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rt.Client().Start(t.Context(), "stuck", "Gated", nil); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := rt.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown with a stuck activity: %v", err)
	}
}

// A start retried with its owner (after a lost reply) runs the instance
// once, before and after it finished; a start of the ID by anyone else is
// refused.
func TestStartRetriedWithItsOwnerRunsOnce(t *testing.T) { onEachStore(t, testStartRetriedWithItsOwner) }

func testStartRetriedWithItsOwner(t *testing.T, store testStore) {
	var runs atomic.Int32
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Once", func(ctx context.Context, _ struct{}) (int32, error) { return runs.Add(1), nil })
	runtime.RegisterOrchestration(reg, "Job", func(ctx *runtime.OrchestrationContext, _ struct{}) (int32, error) {
		return runtime.Await[int32](ctx.CallActivity("Once", nil))
	})
	c := runtime.NewClient(store)
	mine := runtime.StartOwner("request 7")
	for range 3 { // before any runtime runs: one start message
		if err := c.Start(t.Context(), "job", "Job", nil, mine); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Start(t.Context(), "job", "Job", nil); !errors.Is(err, provider.ErrAlreadyExists) {
		t.Fatalf("a start without the owner: %v, want ErrAlreadyExists", err)
	}
	rt := startRuntime(t, store, reg, fastOptions())
	st := wait(t, c, "job")
	for _, client := range []*runtime.Client{c, rt.Client()} {
		if err := client.Start(t.Context(), "job", "Job", nil, mine); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // give a wrongly accepted start time to run
	again := wait(t, c, "job")
	if st.Output != "1" || again.Output != "1" || runs.Load() != 1 || again.ExecutionID != 1 {
		t.Fatalf("outputs %s/%s, %d runs, execution %d; want one run", st.Output, again.Output, runs.Load(), again.ExecutionID)
	}
}

// The client's management calls: list, history, custom status, prune, delete, purge.
func TestClientManagement(t *testing.T) { onEachStore(t, testClientManagement) }

func testClientManagement(t *testing.T, store testStore) {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Count", func(ctx *runtime.OrchestrationContext, n int) (int, error) {
		ctx.SetCustomStatus(n)
		if n < 3 {
			return 0, ctx.ContinueAsNew(n + 1)
		}
		return n, nil
	})
	startRuntime(t, store, reg, fastOptions())
	c := runtime.NewClient(store)
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if err := c.Start(ctx, id, "Count", 0); err != nil {
			t.Fatal(err)
		}
		wait(t, c, id)
	}
	st, err := c.Status(ctx, "a")
	if err != nil || st.Output != "3" || st.ExecutionID != 4 || *st.CustomStatus != "3" || st.CustomStatusVersion != 4 {
		t.Fatalf("status %+v, %v", st, err)
	}
	if _, changed, err := c.CustomStatus(ctx, "a", st.CustomStatusVersion); err != nil || changed {
		t.Fatalf("custom status poll at the current version: changed=%v err=%v", changed, err)
	}
	if page, err := c.List(ctx, provider.ListRequest{Status: provider.StatusCompleted}); err != nil || len(page.Instances) != 2 {
		t.Fatalf("list completed: %+v, %v", page, err)
	}
	if h, err := c.History(ctx, "a"); err != nil || len(h) != 2 || h[1].Kind != provider.EventOrchestrationCompleted {
		t.Fatalf("history %v, %v", h, err)
	}
	if res, err := c.Prune(ctx, "a", provider.PruneOptions{KeepLast: 1}); err != nil || res.ExecutionsDeleted != 3 {
		t.Fatalf("prune: %+v, %v", res, err)
	}
	if res, err := c.Delete(ctx, "a", false); err != nil || res.InstancesDeleted != 1 {
		t.Fatalf("delete: %+v, %v", res, err)
	}
	if res, err := c.Purge(ctx, provider.DeleteFilter{}); err != nil || res.InstancesDeleted != 1 {
		t.Fatalf("purge: %+v, %v", res, err)
	}
	if _, err := c.Status(ctx, "b"); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("status after purge: %v", err)
	}
}

// A panicking activity fails its call; the orchestration sees the panic message.
func TestActivityPanicBecomesFailure(t *testing.T) { onEachStore(t, testActivityPanicBecomesFailure) }

func testActivityPanicBecomesFailure(t *testing.T, store testStore) {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Panics", func(ctx context.Context, _ struct{}) (string, error) { panic("bad input") })
	runtime.RegisterOrchestration(reg, "P", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Panics", nil))
	})
	startRuntime(t, store, reg, fastOptions())
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "p", "P", nil); err != nil {
		t.Fatal(err)
	}
	st := wait(t, c, "p")
	if st.Status != runtime.StatusFailed || !strings.Contains(st.Failure.Message, "activity panicked: bad input") {
		t.Fatalf("status %s failure %+v", st.Status, st.Failure)
	}
}
