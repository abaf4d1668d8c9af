package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

func TestRuntimeAnnouncesItsCodeWhileRunning(t *testing.T) {
	onEachStore(t, testRuntimeAnnouncesItsCode)
}

func testRuntimeAnnouncesItsCode(t *testing.T, store testStore) {
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "Greet", func(ctx *runtime.OrchestrationContext, in string) (string, error) { return in, nil })
	runtime.RegisterOrchestrationVersion(reg, "Greet", "2.0.0", func(ctx *runtime.OrchestrationContext, in string) (string, error) { return in, nil })
	runtime.RegisterActivity(reg, "Shout", func(ctx context.Context, in string) (string, error) { return in, nil })
	opts := fastOptions()
	opts.WorkerID = "pod-a"
	opts.HeartbeatInterval = 50 * time.Millisecond
	rt := runtime.New(store, reg, opts)
	if err := rt.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	workers := store.(provider.Workers)

	first := waitForWorkers(t, workers, func(ws []provider.WorkerInfo) bool { return len(ws) == 1 })[0]
	got := fmt.Sprintln(first.ID, first.Orchestrations, first.Activities)
	if want := "pod-a map[Greet:[1.0.0 2.0.0]] [Shout]\n"; got != want {
		t.Errorf("announcement %q, want %q", got, want)
	}
	// Heartbeats keep it fresh.
	waitForWorkers(t, workers, func(ws []provider.WorkerInfo) bool { return len(ws) == 1 && ws[0].LastSeen.After(first.LastSeen) })

	if err := rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	list, err := workers.ListWorkers(t.Context(), provider.ListWorkersRequest{Within: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("after a clean shutdown the store still lists %+v", list)
	}
}

func waitForWorkers(t *testing.T, w provider.Workers, ok func([]provider.WorkerInfo) bool) []provider.WorkerInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, err := w.ListWorkers(t.Context(), provider.ListWorkersRequest{Within: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if ok(list) {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers listed: %+v", list)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
