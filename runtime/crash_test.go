package runtime_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

// The helper process learns its store from crashHelperEnv ("sqlite:PATH" or
// "postgres:SCHEMA") and where to count activity runs from crashRunsEnv.
const (
	crashHelperEnv = "DUROXIDE_CRASH_HELPER_STORE"
	crashRunsEnv   = "DUROXIDE_CRASH_HELPER_RUNS"
)

// crashRegistry: an orchestration that starts an activity and a durable timer
// in its first turn and needs both. block makes the activity hang (the process
// is killed while it runs); runs counts executions of the activity.
func crashRegistry(block bool, runsFile string) *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Charge", func(ctx context.Context, amount int) (string, error) {
		f, err := os.OpenFile(runsFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		fmt.Fprintln(f, "run")
		f.Close()
		if block {
			select {} // killed here
		}
		return fmt.Sprintf("charged %d", amount), nil
	})
	runtime.RegisterOrchestration(reg, "Checkout", func(ctx *runtime.OrchestrationContext, amount int) (string, error) {
		charge := ctx.CallActivity("Charge", amount)
		cooldown := ctx.CreateTimer(time.Second)
		if err := ctx.WhenAll(charge, cooldown); err != nil {
			return "", err
		}
		receipt, err := runtime.Await[string](charge)
		return receipt + " after cooldown", err
	})
	return reg
}

// runCrashHelper is the worker process the test kills: it starts the instance,
// waits until the activity runs, says so, and hangs.
func runCrashHelper() int {
	ctx := context.Background()
	store, err := openHelperStore(ctx, os.Getenv(crashHelperEnv))
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	runs := os.Getenv(crashRunsEnv)
	opts := fastOptions()
	opts.ActivityLockTimeout = 2 * time.Second
	rt := runtime.New(store, crashRegistry(true, runs), opts)
	if err := rt.Start(ctx); err != nil {
		fmt.Println("start:", err)
		return 1
	}
	if err := runtime.NewClient(store).Start(ctx, "order-1", "Checkout", 42); err != nil {
		fmt.Println("start instance:", err)
		return 1
	}
	for {
		if b, _ := os.ReadFile(runs); len(b) > 0 {
			fmt.Println("activity running")
			select {}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func openHelperStore(ctx context.Context, spec string) (provider.Provider, error) {
	kind, target, _ := strings.Cut(spec, ":")
	if kind == "postgres" {
		return postgres.Open(ctx, os.Getenv(pgtest.EnvURL), postgres.Options{Schema: target})
	}
	return sqlite.Open(ctx, target, sqlite.Options{})
}

// A worker process is killed (SIGKILL) with an activity running and a timer
// pending. A new runtime on the same store finishes the instance: the activity
// runs again (at least once) but its result is recorded once.
func TestCrashRecovery(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "store.db")
		crashRecovery(t, "sqlite:"+db, func() testStore { return openStore(t, db) })
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.URL(t) // skips under -short, before the helper process starts
		schema := pgtest.RandomSchema()
		crashRecovery(t, "postgres:"+schema, func() testStore {
			p := pgtest.OpenSchema(t, schema)
			t.Cleanup(func() { _ = p.DropSchema(context.Background()) })
			return p
		})
	})
}

func crashRecovery(t *testing.T, spec string, reopen func() testStore) {
	runs := filepath.Join(t.TempDir(), "runs")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+spec, crashRunsEnv+"="+runs)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "activity running" {
		_ = cmd.Process.Kill()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	store := reopen()
	before, err := store.GetInstanceInfo(t.Context(), provider.InstanceRequest{Instance: "order-1"})
	if err != nil || before.Status != provider.StatusRunning {
		t.Fatalf("after the crash: %+v, %v; want a running instance", before, err)
	}
	startRuntime(t, store, crashRegistry(false, runs), fastOptions())
	st := wait(t, runtime.NewClient(store), "order-1")
	if st.Status != runtime.StatusCompleted || st.Output != `"charged 42 after cooldown"` {
		t.Fatalf("status %s output %s failure %v", st.Status, st.Output, st.Failure)
	}
	history, err := store.ReadHistory(t.Context(), provider.ExecutionRequest{Instance: "order-1"})
	if err != nil {
		t.Fatal(err)
	}
	completions := 0
	for _, e := range history {
		if e.Kind == provider.EventActivityCompleted {
			completions++
		}
	}
	ran, _ := os.ReadFile(runs)
	if completions != 1 || strings.Count(string(ran), "run") != 2 {
		t.Fatalf("activity ran %d times, %d results recorded; want 2 runs, 1 result", strings.Count(string(ran), "run"), completions)
	}
}
