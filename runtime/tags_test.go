package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// tagRegistry registers Route, which calls Where untagged, tagged gpu
// (locally when it can, and with retries) and tagged ml, and reports which
// runtime ran each. Where answers with runtimeName.
func tagRegistry(runtimeName string) *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Where", func(context.Context, string) (string, error) { return runtimeName, nil })
	runtime.RegisterOrchestration(reg, "Route", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		calls := []*runtime.Future{
			ctx.CallActivity("Where", ""),
			ctx.CallActivity("Where", "", runtime.WithTag("gpu"), runtime.WithLocal()),
			ctx.CallActivity("Where", "", runtime.WithTag("gpu"), runtime.WithRetry(runtime.RetryPolicy{MaxAttempts: 2})),
			ctx.CallActivity("Where", "", runtime.WithTag("ml")),
		}
		var ran []string
		for _, f := range calls {
			where, err := runtime.Await[string](f)
			if err != nil {
				return "", err
			}
			ran = append(ran, where)
		}
		return strings.Join(ran, ","), nil
	})
	return reg
}

// Each tagged activity runs only in a runtime that takes its tag, whichever
// runtime runs the turns and whatever fast path schedules it.
func TestActivityTagsRouteToTheirWorkers(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		plain := fastOptions()
		plain.WorkerID = "plain"
		startRuntime(t, store, tagRegistry("plain"), plain)
		gpu := fastOptions()
		gpu.WorkerID, gpu.ActivityTags = "gpu", runtime.TagFilter{Tags: []string{"gpu"}}
		startRuntime(t, store, tagRegistry("gpu"), gpu)
		ml := fastOptions()
		ml.WorkerID, ml.ActivityTags = "ml", runtime.TagFilter{Tags: []string{"ml"}}
		startRuntime(t, store, tagRegistry("ml"), ml)
		client := runtime.NewClient(store)
		for i := range 4 {
			id := fmt.Sprintf("route-%d", i)
			if err := client.Start(timeout(t, time.Minute), id, "Route", ""); err != nil {
				t.Fatal(err)
			}
			st := wait(t, client, id)
			if st.Status != runtime.StatusCompleted || st.Output != `"plain,gpu,gpu,ml"` {
				t.Fatalf("%s: %s %s %v, want the activities run by plain,gpu,gpu,ml", id, st.Status, st.Output, st.Failure)
			}
		}
		h, err := store.ReadHistory(t.Context(), provider.ExecutionRequest{Instance: "route-0"})
		if err != nil {
			t.Fatal(err)
		}
		var tags []string
		for _, ev := range h {
			if ev.Kind == provider.EventActivityScheduled {
				tags = append(tags, ev.Tag)
			}
		}
		slices.Sort(tags) // the retried call's coroutine schedules last
		if got := strings.Join(tags, ","); got != ",gpu,gpu,ml" {
			t.Errorf("tags recorded on ActivityScheduled: %q, want %q", got, ",gpu,gpu,ml")
		}
	})
}

// A tagged activity no runtime takes waits queued; a runtime that takes
// its tag, started later, runs it.
func TestTaggedActivityWaitsForItsWorker(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		startRuntime(t, store, tagRegistry("plain"), fastOptions())
		client := runtime.NewClient(store)
		if err := client.Start(timeout(t, time.Minute), "waits", "Route", ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if st, err := client.Status(t.Context(), "waits"); err != nil || st.Status != runtime.StatusRunning {
			t.Fatalf("status with no gpu worker: %+v %v, want Running", st, err)
		}
		depths, err := store.GetQueueDepths(t.Context())
		if err != nil || depths.Worker+depths.Locked != 3 {
			t.Fatalf("queue depths with no gpu or ml worker: %+v %v, want the 3 tagged activities queued", depths, err)
		}
		any := fastOptions()
		any.ActivityTags = runtime.TagFilter{Any: true}
		startRuntime(t, store, tagRegistry("any"), any)
		if st := wait(t, client, "waits"); st.Output != `"plain,any,any,any"` {
			t.Fatalf("output %s, want the tagged activities run by the runtime taking any tag", st.Output)
		}
	})
}

func TestInvalidTagFailsTheCall(t *testing.T) {
	store := openStore(t, "")
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "A", func(context.Context, string) (string, error) { return "", nil })
	runtime.RegisterOrchestration(reg, "Bad", func(ctx *runtime.OrchestrationContext, _ string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("A", "", runtime.WithTag("not a tag")))
	})
	startRuntime(t, store, reg, fastOptions())
	client := runtime.NewClient(store)
	if err := client.Start(t.Context(), "bad", "Bad", ""); err != nil {
		t.Fatal(err)
	}
	st := wait(t, client, "bad")
	if st.Status != runtime.StatusFailed || st.Failure == nil || !strings.Contains(st.Failure.Message, `activity tag "not a tag"`) {
		t.Fatalf("got %s %+v, want failed naming the bad tag", st.Status, st.Failure)
	}
	rt := runtime.New(store, reg, runtime.Options{ActivityTags: runtime.TagFilter{Tags: []string{"a,b"}}})
	if err := rt.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "ActivityTags") {
		t.Fatalf("start with a bad tag filter: %v, want an error naming ActivityTags", err)
	}
}
