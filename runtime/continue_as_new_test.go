package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
	"github.com/duroxide/duroxide-go/runtime"
)

// awaitGo is an eternal orchestration's second execution: it waits for the
// "go" event and returns its data. Its first execution continues as new.
func awaitGo(ctx *runtime.OrchestrationContext, input string) (string, error) {
	if input == "first" {
		return "", ctx.ContinueAsNew("second")
	}
	var got string
	if err := ctx.WaitForEvent("go").Await(&got); err != nil {
		return "", err
	}
	return got, nil
}

// continueAsNewByHand locks instance's first turn, lets during run while the
// lock is held, then acks the turn as a continue-as-new, so what during
// sends races the end of execution 1.
func continueAsNewByHand(t *testing.T, store provider.Provider, instance string, during func()) {
	t.Helper()
	ctx := t.Context()
	item, err := provider.FetchOne(ctx, store, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
	if err != nil || item == nil || item.Instance != instance {
		t.Fatalf("fetch the first turn of %s: %+v, %v", instance, item, err)
	}
	during()
	now := time.Now().UnixMilli()
	ack := provider.OrchestrationAck{
		ExecutionID: 1,
		HistoryDelta: []provider.Event{
			{ID: 1, Kind: provider.EventOrchestrationStarted, Time: now, Name: "AwaitGo", Version: item.Version, Input: `"first"`, ExecutionID: 1},
			{ID: 2, Kind: provider.EventOrchestrationContinuedAsNew, Time: now, Input: `"second"`},
		},
		OrchestratorItems: []provider.WorkItem{{Kind: provider.WorkContinueAsNew, Instance: instance, Name: "AwaitGo",
			Version: item.Version, Input: `"second"`, ExecutionID: 2}},
		Metadata: provider.ExecutionMetadata{OrchestrationName: "AwaitGo", OrchestrationVersion: item.Version,
			Status: provider.StatusContinuedAsNew, Output: `"second"`},
	}
	if err := providertest.AckTurn(ctx, store, item.LockToken, ack); err != nil {
		t.Fatalf("ack the continue-as-new: %v", err)
	}
}

func awaitGoRegistry(t *testing.T) *runtime.Registry {
	t.Helper()
	reg := runtime.NewRegistry()
	runtime.RegisterOrchestration(reg, "AwaitGo", awaitGo)
	return reg
}

// An event accepted while execution 1's last turn runs reaches execution 2,
// even when a fetch finds the ContinueAsNew message held by another
// transaction (a concurrent fetcher's scan) and takes the event alone: the
// runtime hands such an item back rather than acking its messages away.
func TestEventRacingContinueAsNewWithHeldMessageReachesNextExecution(t *testing.T) {
	store := pgtest.Open(t)
	ctx := t.Context()
	client := runtime.NewClient(store)
	if err := client.Start(ctx, "loop", "AwaitGo", "first"); err != nil {
		t.Fatal(err)
	}
	continueAsNewByHand(t, store, "loop", func() {
		if err := client.RaiseEvent(ctx, "loop", "go", "payload"); err != nil {
			t.Fatalf("raise while execution 1 runs: %v", err)
		}
	})
	holder, err := store.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(context.Background()) }()
	if _, err := holder.Exec(ctx, `SELECT id FROM orchestrator_queue
		WHERE instance_id = 'loop' AND (work_item::jsonb ->> 'kind') = 'ContinueAsNew' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	startRuntime(t, store, awaitGoRegistry(t), fastOptions())
	time.Sleep(500 * time.Millisecond) // the runtime's fetches meet the held row
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	st := wait(t, client, "loop")
	if st.Status != runtime.StatusCompleted || st.Output != `"payload"` {
		t.Fatalf("instance after the race: %s %s (last error %v), want Completed \"payload\"", st.Status, st.Output, st.LastError)
	}
}

// Between a continue-as-new commit and the next execution's first turn the
// instance is running: an event or a termination sent then is accepted and
// reaches the next execution.
func TestMessagesBetweenExecutionsAreAccepted(t *testing.T) {
	cases := []struct {
		name   string
		send   func(ctx context.Context, c *runtime.Client) error
		status runtime.InstanceStatus
		output string
	}{
		{"raise", func(ctx context.Context, c *runtime.Client) error { return c.RaiseEvent(ctx, "loop", "go", "between") },
			runtime.StatusCompleted, `"between"`},
		{"terminate", func(ctx context.Context, c *runtime.Client) error { return c.Terminate(ctx, "loop", "between") },
			runtime.StatusTerminated, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			onEachStore(t, func(t *testing.T, store testStore) {
				client := runtime.NewClient(store)
				if err := client.Start(t.Context(), "loop", "AwaitGo", "first"); err != nil {
					t.Fatal(err)
				}
				continueAsNewByHand(t, store, "loop", func() {})
				if err := tc.send(t.Context(), client); err != nil {
					t.Fatalf("%s between executions: %v", tc.name, err)
				}
				startRuntime(t, store, awaitGoRegistry(t), fastOptions())
				st := wait(t, client, "loop")
				if st.Status != tc.status || (tc.output != "" && st.Output != tc.output) {
					t.Fatalf("after %s between executions: %s %s, want %s %s", tc.name, st.Status, st.Output, tc.status, tc.output)
				}
			})
		})
	}
}
