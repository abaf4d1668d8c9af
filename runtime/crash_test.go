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
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

const crashHelperEnv = "DUROXIDE_CRASH_HELPER_DB"

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
	db := os.Getenv(crashHelperEnv)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, db, sqlite.Options{})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	runs := filepath.Join(filepath.Dir(db), "runs")
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

// A worker process is killed (SIGKILL) with an activity running and a timer
// pending. A new runtime on the same file finishes the instance: the activity
// runs again (at least once) but its result is recorded once.
func TestCrashRecovery(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "store.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashHelperEnv+"="+db)
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

	store := openStore(t, db)
	before, err := store.GetInstanceInfo(t.Context(), "order-1")
	if err != nil || before.Status != provider.StatusRunning {
		t.Fatalf("after the crash: %+v, %v; want a running instance", before, err)
	}
	startRuntime(t, store, crashRegistry(false, filepath.Join(dir, "runs")), fastOptions())
	st := wait(t, runtime.NewClient(store), "order-1")
	if st.Status != provider.StatusCompleted || st.Output != `"charged 42 after cooldown"` {
		t.Fatalf("status %s output %s failure %v", st.Status, st.Output, st.Failure)
	}
	history, err := store.ReadHistory(t.Context(), "order-1")
	if err != nil {
		t.Fatal(err)
	}
	completions := 0
	for _, e := range history {
		if e.Kind == provider.EventActivityCompleted {
			completions++
		}
	}
	runs, _ := os.ReadFile(filepath.Join(dir, "runs"))
	if completions != 1 || strings.Count(string(runs), "run") != 2 {
		t.Fatalf("activity ran %d times, %d results recorded; want 2 runs, 1 result", strings.Count(string(runs), "run"), completions)
	}
}
