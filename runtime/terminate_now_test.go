package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// TerminateNow ends an instance and its children in the store when no worker
// is left to run the terminating turns: the client runs them itself.
func TestTerminateNowWithoutWorkers(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		reg := runtime.NewRegistry()
		runtime.RegisterOrchestration(reg, "Child", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.WaitForEvent("never"))
		})
		runtime.RegisterOrchestration(reg, "Parent", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
			return runtime.Await[string](ctx.CallSubOrchestration("Child", struct{}{}, runtime.WithInstanceID("child")))
		})
		rt := runtime.New(store, reg, fastOptions())
		if err := rt.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "parent", "Parent", nil); err != nil {
			t.Fatal(err)
		}
		waitRunning(t, c, "child")
		if err := rt.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Never run by a worker: only a queued start.
		if err := c.Start(t.Context(), "queued", "Parent", nil); err != nil {
			t.Fatal(err)
		}

		for _, id := range []string{"parent", "queued"} {
			if err := c.TerminateNow(t.Context(), id, "pool deleted"); err != nil {
				logLocks(t, store) // seen once in CI: "a worker holds the instance" with no worker
				t.Fatalf("terminate %s now: %v", id, err)
			}
		}
		for _, id := range []string{"parent", "child", "queued"} {
			st, err := c.Status(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != runtime.StatusTerminated || !strings.Contains(st.Failure.Message, "pool deleted") {
				t.Fatalf("%s: status %s failure %+v, want Terminated for the pool's deletion", id, st.Status, st.Failure)
			}
		}
		if err := c.TerminateNow(t.Context(), "parent", "again"); !errors.Is(err, provider.ErrInstanceFinished) {
			t.Fatalf("terminating a terminated instance: %v, want ErrInstanceFinished", err)
		}
	})
}

func waitRunning(t *testing.T, c *runtime.Client, id string) {
	t.Helper()
	ctx := timeout(t, 30*time.Second)
	for ctx.Err() == nil {
		if st, err := c.Status(ctx, id); err == nil && st.Status == runtime.StatusRunning {
			return
		}
	}
	t.Fatalf("%s never ran", id)
}

// logLocks logs what a PostgreSQL store holds: instance locks, queued
// messages and the database's other sessions, to tell who held an
// instance that no worker should hold.
func logLocks(t *testing.T, store testStore) {
	pg, ok := store.(interface{ Pool() *pgxpool.Pool })
	if !ok {
		return
	}
	for _, q := range []string{
		`SELECT instance_id || ' ' || lock_token || ' until ' || locked_until::text || ' at ' || locked_at::text || ' now ' || now()::text FROM instance_locks`,
		`SELECT id::text || ' ' || instance_id || ' ' || left(work_item, 80) || ' visible ' || visible_at::text || ' ' || coalesce(lock_token, '') FROM orchestrator_queue`,
		`SELECT pid::text || ' ' || coalesce(state, '') || ' ' || coalesce(xact_start::text, '') || ' ' || left(query, 120) FROM pg_stat_activity
		 WHERE datname = current_database() AND pid <> pg_backend_pid()`,
	} {
		rows, err := pg.Pool().Query(context.Background(), q)
		if err != nil {
			t.Logf("%s: %v", q, err)
			continue
		}
		for rows.Next() {
			var line string
			if rows.Scan(&line) == nil {
				t.Log(line)
			}
		}
		rows.Close()
	}
}
