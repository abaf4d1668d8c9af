package cli

import (
	"strings"
	"testing"
)

// TestCLIStartOfATakenID: starting an ID that a completed instance holds
// fails (exit 1) and says why; it used to print "started" and do nothing.
// --id-reuse allow-finished replaces the completed instance, a running one
// only with terminate-running; --owner makes a repeated start a retry.
func TestCLIStartOfATakenID(t *testing.T) {
	store := sqliteWithWorkers(t)
	mustRun := func(args ...string) string {
		t.Helper()
		r := cliWith(t, store, args...)
		if r.code != 0 {
			t.Fatalf("duroxide %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	mustRun("start", "Hello", "--id", "hello-1", "--input", `"CLI"`, "--wait", "2m")
	r := cliWith(t, store, "start", "FanOut", "--id", "hello-1")
	if r.code != exitFailed || !strings.Contains(r.stderr, `start "hello-1": instance already exists (Completed)`) {
		t.Fatalf("start FanOut --id hello-1 on a completed Hello: exit %d\nstdout: %sstderr: %s", r.code, r.stdout, r.stderr)
	}
	if st := statusOf(t, mustRun("status", "hello-1", "-o", "json")); string(st.Output) != `"Hello, CLI!"` {
		t.Fatalf("the refused start changed the output to %s", st.Output)
	}

	out := mustRun("start", "Hello", "--id", "hello-1", "--input", `"again"`, "--id-reuse", "allow-finished", "--wait", "2m")
	if !strings.Contains(out, `"Hello, again!"`) {
		t.Fatalf("start --id-reuse allow-finished over a completed instance printed:\n%s", out)
	}

	long := []string{"start", "Approval", "--id", "approve-1", "--input", `{"item": "desk", "timeout": 600000000000}`, "--owner", "ticket 9"}
	mustRun(long...)
	mustRun(long...) // a retry of the same start
	r = cliWith(t, store, "start", "Hello", "--id", "approve-1", "--id-reuse", "allow-finished")
	if r.code != exitFailed || !strings.Contains(r.stderr, `start "approve-1": instance already exists (`) ||
		!strings.Contains(r.stderr, "started by ticket 9") {
		t.Fatalf("allow-finished start over a running instance: exit %d\nstderr: %s", r.code, r.stderr)
	}
	out = mustRun("start", "Hello", "--id", "approve-1", "--input", `"over"`, "--id-reuse", "terminate-running", "--wait", "2m")
	if !strings.Contains(out, `"Hello, over!"`) {
		t.Fatalf("start --id-reuse terminate-running over a running instance printed:\n%s", out)
	}

	if r := cliWith(t, store, "start", "Hello", "--id-reuse", "sometimes"); r.code != exitUsage || !strings.Contains(r.stderr, "--id-reuse must be") {
		t.Fatalf("start --id-reuse sometimes: exit %d, stderr %q; want exit %d", r.code, r.stderr, exitUsage)
	}
}
