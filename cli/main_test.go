package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

// The CLI runs in-process against a real store, while a runtime with the
// sample orchestrations works the same store through its own connection,
// as a WorkerPool's pods would.

func TestCLIOnSQLite(t *testing.T) {
	exerciseCLI(t, sqliteWithWorkers(t))
}

func TestCLIOnPostgres(t *testing.T) {
	p := pgtest.Open(t)
	startWorkers(t, p)
	// The connection string comes from the environment, as the docs advise.
	t.Setenv(envStore, pgtest.URL(t))
	exerciseCLI(t, []string{"--schema", p.Schema()})
}

// sqliteWithWorkers opens a SQLite store in a temp dir with the sample
// workers on it and returns the CLI's --store arguments for it.
func sqliteWithWorkers(t *testing.T) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	p, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	startWorkers(t, p)
	return []string{"--store", path}
}

func startWorkers(t *testing.T, p provider.Provider) {
	t.Helper()
	reg := runtime.NewRegistry()
	samples.Register(reg)
	rt := runtime.New(p, reg, runtime.Options{ActivityTags: provider.TagFilter{Tags: []string{"gpu"}, Untagged: true}})
	if err := rt.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
}

type result struct {
	stdout, stderr string
	code           int
}

// cliWith runs the command line with the store flags first.
func cliWith(t *testing.T, store []string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(t.Context(), append(append([]string{}, store...), args...), &out, &errOut)
	return result{out.String(), errOut.String(), code}
}

func exerciseCLI(t *testing.T, store []string) {
	cli := func(args ...string) result { t.Helper(); return cliWith(t, store, args...) }
	mustRun := func(args ...string) string {
		t.Helper()
		r := cli(args...)
		if r.code != 0 {
			t.Fatalf("duroxide %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}

	// The workers' announcement: the in-process runtime with the samples
	// (its first heartbeat goes out as it starts, asynchronously).
	var workers []provider.WorkerInfo
	for deadline := time.Now().Add(30 * time.Second); len(workers) == 0 && time.Now().Before(deadline); {
		decode(t, mustRun("workers", "-o", "json"), &workers)
		time.Sleep(10 * time.Millisecond)
	}
	if len(workers) != 1 || !workers[0].Registers("Approval", "") || len(workers[0].Activities) == 0 {
		t.Errorf("workers: %+v", workers)
	}
	if out := mustRun("workers"); !strings.Contains(out, "Hello@1.0.0") || !strings.Contains(out, "-,gpu") {
		t.Errorf("workers printed:\n%s", out)
	}

	// start --wait prints the final status; a second start of the same ID is refused and changes nothing.
	out := mustRun("start", "Hello", "--id", "hello-1", "--input", `"CLI"`, "--wait", "2m")
	if !strings.Contains(out, `"Hello, CLI!"`) || !strings.Contains(out, "Completed") {
		t.Fatalf("start --wait printed:\n%s", out)
	}
	if r := cli("start", "Hello", "--id", "hello-1", "--input", `"again"`); r.code != exitFailed || !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("second start of hello-1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if st := statusOf(t, mustRun("status", "hello-1", "-o", "json")); string(st.Output) != `"Hello, CLI!"` {
		t.Errorf("second start changed the output to %s", st.Output)
	}
	if hist := mustRun("history", "hello-1"); !strings.Contains(hist, "OrchestrationCompleted") || !strings.Contains(hist, "ActivityScheduled") {
		t.Errorf("history:\n%s", hist)
	}

	// An event raised twice with one key is recorded once.
	mustRun("start", "Approval", "--id", "approve-1", "--input", `{"item": "laptop", "timeout": 600000000000}`)
	mustRun("raise", "approve-1", "approval", "--data", `{"approved": true, "by": "cli"}`, "--key", "decision")
	// The retry may find the instance already finished by the first: then it is refused, saying so.
	if r := cli("raise", "approve-1", "approval", "--data", `{"approved": true, "by": "cli"}`, "--key", "decision"); r.code != 0 &&
		!strings.Contains(r.stderr, "instance has finished") {
		t.Fatalf("second raise: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	st := statusOf(t, mustRun("wait", "approve-1", "--timeout", "2m", "-o", "json"))
	if string(st.Output) != `"laptop: approved by cli"` {
		t.Errorf("approval output %s", st.Output)
	}
	var history historyFile
	decode(t, mustRun("history", "approve-1", "-o", "json"), &history)
	if n := countKind(history.Events, provider.EventExternalRaised); n != 1 || history.Instance != "approve-1" {
		t.Errorf("history of %q records the keyed event %d times, want approve-1's, once", history.Instance, n)
	}

	// terminate: wait reports the end and exits 1, the reason is in the failure.
	mustRun("start", "Approval", "--id", "stop-1", "--input", `{"item": "desk", "timeout": 600000000000}`)
	mustRun("terminate", "stop-1", "--reason", "no budget")
	r := cli("wait", "stop-1", "--timeout", "2m")
	if r.code != exitFailed || !strings.Contains(r.stdout, "Terminated") || !strings.Contains(r.stdout, "no budget") {
		t.Errorf("wait on a terminated instance: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	var listed listPage
	decode(t, mustRun("list", "--status", "Completed", "-o", "json"), &listed)
	if got := instanceIDs(listed.Instances); strings.Join(got, ",") != "approve-1,hello-1" {
		t.Errorf("list --status Completed (newest first): %v", got)
	}
	var stats statsView
	decode(t, mustRun("stats", "-o", "json"), &stats)
	if m := stats.Instances; m.Total != 3 || m.Completed != 2 || m.Terminated != 1 {
		t.Errorf("stats: %+v", m)
	}

	// Bad input is refused before anything reaches the store.
	for _, bad := range [][]string{
		{"start", "Hello", "--input", "{not json"},
		{"raise", "hello-1"},
		{"list", "--status", "Sleeping"},
		{"list", "--limit", "-1"},
		{"list", "--limit", "0"},
		{"list", "--since", "yesterday"},
		{"list", "--after", "not-a-cursor"},
		{"purge"},
		{"status", "hello-1", "-o", "yaml"},
	} {
		if r := cli(bad...); r.code != exitUsage || r.stderr == "" {
			t.Errorf("duroxide %s: exit %d, stderr %q; want exit %d and a message", strings.Join(bad, " "), r.code, r.stderr, exitUsage)
		}
	}
	decode(t, mustRun("stats", "-o", "json"), &stats)
	if stats.Instances.Total != 3 {
		t.Errorf("bad input changed the store: %d instances", stats.Instances.Total)
	}

	// delete one, purge the rest.
	if out := mustRun("delete", "stop-1"); !strings.Contains(out, "deleted 1 instances") {
		t.Errorf("delete printed %q", out)
	}
	if r := cli("status", "stop-1"); r.code != exitFailed || !strings.Contains(r.stderr, "not found") {
		t.Errorf("status of a deleted instance: exit %d, stderr %q", r.code, r.stderr)
	}
	var purged deletedView
	decode(t, mustRun("purge", "--all", "-o", "json"), &purged)
	if purged.Instances != 2 {
		t.Errorf("purge --all deleted %d instances, want 2", purged.Instances)
	}
	decode(t, mustRun("list", "-o", "json"), &listed)
	if len(listed.Instances) != 0 {
		t.Errorf("after purge, list shows %v", instanceIDs(listed.Instances))
	}
}

func TestCLIRefusesAMissingStore(t *testing.T) {
	t.Setenv(envStore, "")
	t.Setenv(envPostgresURL, "")
	missing := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{{"list"}, {"--store", missing, "list"}} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, &out, &errOut); code != exitUsage {
			t.Errorf("duroxide %v: exit %d, want %d (%s)", args, code, exitUsage, errOut.String())
		}
	}
	if m, _ := filepath.Glob(missing + "*"); len(m) != 0 {
		t.Errorf("a mistyped SQLite path was created: %v", m)
	}
}

func TestCLIRefusesAMissingSchemaAndHidesThePassword(t *testing.T) {
	url := pgtest.URL(t)
	var out, errOut bytes.Buffer
	t.Setenv(envStore, url)
	code := run(t.Context(), []string{"--schema", "no_such_schema_here", "list"}, &out, &errOut)
	if code != exitUsage || !strings.Contains(errOut.String(), "does not exist") {
		t.Errorf("missing schema: exit %d, stderr %q", code, errOut.String())
	}
	errOut.Reset()
	t.Setenv(envStore, "postgres://someone:s3cretPassw0rd@127.0.0.1:1/db?connect_timeout=2")
	if code := run(t.Context(), []string{"list"}, &out, &errOut); code != exitFailed {
		t.Errorf("unreachable store: exit %d, want %d", code, exitFailed)
	}
	if strings.Contains(errOut.String(), "s3cretPassw0rd") || errOut.Len() == 0 {
		t.Errorf("unreachable store: stderr %q (must explain, must not show the password)", errOut.String())
	}
}

// Every spelling of a PostgreSQL connection string reaches PostgreSQL, not a
// SQLite file of that name; a string that cannot work is a usage error that
// names the accepted forms; no error shows the password.
func TestCLIRecognisesPostgresStoresAndHidesPasswords(t *testing.T) {
	const password = "s3cretPassw0rd"
	for _, tc := range []struct {
		store string
		code  int
		want  string
	}{
		{"POSTGRES://someone:" + password + "@127.0.0.1:1/db?connect_timeout=2", exitFailed, "connect"},
		{"PostgreSQL://someone:" + password + "@127.0.0.1:1/db?connect_timeout=2", exitFailed, "connect"},
		{"host=127.0.0.1 port=1 user=someone password=" + password + " dbname=db connect_timeout=2", exitFailed, "connect"},
		{"postgres://someone@127.0.0.1:1/db?password=" + password + "&connect_timeout=2", exitFailed, "connect"},
		{"pg://someone:" + password + "@127.0.0.1:1/db", exitUsage, "postgres://"},
		{"postgres://someone:" + password + "@127.0.0.1:port/db", exitUsage, "invalid port"},
		{"mysql://someone:" + password + "@127.0.0.1/db", exitUsage, "postgres://"},
	} {
		t.Setenv(envStore, tc.store)
		var out, errOut bytes.Buffer
		code := run(t.Context(), []string{"list"}, &out, &errOut)
		msg := errOut.String()
		if code != tc.code || !strings.Contains(msg, tc.want) || strings.Contains(msg, password) {
			t.Errorf("store %s: exit %d, stderr %q; want exit %d naming %q, without the password", tc.store, code, msg, tc.code, tc.want)
		}
	}
}

func statusOf(t *testing.T, out string) statusView {
	t.Helper()
	var v statusView
	decode(t, out, &v)
	return v
}

func decode(t *testing.T, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decode %T from %q: %v", v, out, err)
	}
}

func countKind(events []provider.Event, kind provider.EventKind) int {
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func instanceIDs(entries []listEntry) []string {
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, e.Instance)
	}
	return ids
}
