package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// list pages newest first: each page's stderr names the command for the
// next, which continues where the page ended; a start no worker can run is
// listed as Pending.
func TestListPagesAndPending(t *testing.T) {
	store := sqliteWithWorkers(t)
	cli := func(args ...string) result { t.Helper(); return cliWith(t, store, args...) }
	for _, id := range []string{"p-1", "p-2", "p-3"} {
		if r := cli("start", "Hello", "--id", id, "--input", `"x"`, "--wait", "1m"); r.code != 0 {
			t.Fatalf("start %s: exit %d %s", id, r.code, r.stderr)
		}
	}
	if r := cli("start", "NoSuchOrchestration", "--id", "nobody-runs-it"); r.code != 0 {
		t.Fatalf("start of an unregistered orchestration: exit %d %s", r.code, r.stderr)
	}

	var seen []string
	args := []string{"list", "--prefix", "p-", "--limit", "2", "-o", "json"}
	for pages := 0; ; pages++ {
		r := cli(args...)
		if r.code != 0 || pages > 3 {
			t.Fatalf("duroxide %s: exit %d, page %d: %s", strings.Join(args, " "), r.code, pages, r.stderr)
		}
		var page listPage
		decode(t, r.stdout, &page)
		seen = append(seen, instanceIDs(page.Instances)...)
		if page.Next == "" {
			if r.stderr != "" {
				t.Errorf("the last page printed %q on stderr", r.stderr)
			}
			break
		}
		for _, want := range []string{"more instances: duroxide list ", "--limit 2 ", "--prefix p- ", "--store " + store[1] + " ", "--after " + page.Next + "\n"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr %q, want it to hold %q", r.stderr, want)
			}
		}
		args = []string{"list", "--prefix", "p-", "--limit", "2", "-o", "json", "--after", page.Next}
	}
	if got := strings.Join(seen, ","); got != "p-3,p-2,p-1" {
		t.Errorf("pages listed %s, want p-3,p-2,p-1 (newest first, each once)", got)
	}

	var stats statsView
	decode(t, cli("stats", "-o", "json").stdout, &stats)
	if stats.Instances.Pending != 1 || stats.Instances.Total != 3 {
		t.Errorf("stats: %+v, want 3 instances and 1 pending start", stats.Instances)
	}
	if r := cli("stats"); !strings.Contains(r.stdout, "pending starts 1") {
		t.Errorf("stats: %q, want the pending start counted", r.stdout)
	}
	var pending listPage
	decode(t, cli("list", "--status", "Pending", "-o", "json").stdout, &pending)
	if got := instanceIDs(pending.Instances); len(got) != 1 || got[0] != "nobody-runs-it" || pending.Instances[0].Orchestration != "NoSuchOrchestration" {
		t.Errorf("list --status Pending: %+v", pending.Instances)
	}
	// wait on it says why it makes no progress, and a timeout exits 3.
	r := cli("wait", "nobody-runs-it", "--timeout", "300ms")
	if r.code != exitTimeout || !strings.Contains(r.stderr, "still Pending since") ||
		!strings.Contains(r.stderr, "registers NoSuchOrchestration") || !strings.Contains(r.stderr, "waiting for nobody-runs-it") {
		t.Errorf("wait on a pending instance: exit %d, stderr %q; want exit %d saying it is Pending", r.code, r.stderr, exitTimeout)
	}
	st := statusOf(t, cli("status", "nobody-runs-it", "-o", "json").stdout)
	if st.Status != "Pending" || st.Orchestration != "NoSuchOrchestration" || st.CreatedAt.IsZero() {
		t.Errorf("status of a pending instance: %+v", st)
	}
	out := cli("list").stdout
	if !strings.Contains(out, "AGE") || !strings.Contains(out, "nobody-runs-it  Pending") {
		t.Errorf("list printed:\n%s", out)
	}
}

func TestListRequestFromFlags(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	req, err := listFlags{status: "Stalled", orchestration: "Approval", prefix: "order-", since: "2h", before: "2026-11-27T11:30:00Z",
		updatedSince: "30m", limit: 20}.request(now)
	if err != nil {
		t.Fatal(err)
	}
	want := provider.ListRequest{Status: provider.StatusStalled, Orchestration: "Approval", IDPrefix: "order-", Limit: 20,
		CreatedAfter: now.Add(-2 * time.Hour), CreatedBefore: time.Date(2026, 11, 27, 11, 30, 0, 0, time.UTC)}
	if !req.CreatedAfter.Equal(want.CreatedAfter) || !req.CreatedBefore.Equal(want.CreatedBefore) || !req.UpdatedAfter.Equal(now.Add(-30*time.Minute)) ||
		req.Status != want.Status || req.Orchestration != want.Orchestration || req.IDPrefix != want.IDPrefix || req.Limit != 20 {
		t.Errorf("request %+v, want %+v", req, want)
	}
	for name, bad := range map[string]func() error{
		"limit 0":            func() error { _, err := listFlags{}.request(now); return err },
		"limit too big":      func() error { _, err := listFlags{limit: 1001}.request(now); return err },
		"unknown status":     func() error { _, err := listFlags{status: "Asleep", limit: 10}.request(now); return err },
		"bad since":          func() error { _, err := listFlags{since: "yesterday", limit: 10}.request(now); return err },
		"empty range":        func() error { _, err := listFlags{since: "1h", before: "2h", limit: 10}.request(now); return err },
		"bad updated-before": func() error { _, err := listFlags{updatedBefore: "noon", limit: 10}.request(now); return err },
		"empty updated range": func() error {
			_, err := listFlags{updatedSince: "1h", updatedBefore: "2h", limit: 10}.request(now)
			return err
		},
	} {
		err := bad()
		if _, ok := err.(*usageError); !ok {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}

// An error names each thing once: no word twice in a row ("send to
// instance instance").
func TestErrorsDoNotStutter(t *testing.T) {
	store := sqliteWithWorkers(t)
	for _, args := range [][]string{{"raise", "nope", "ev"}, {"terminate", "nope"}, {"status", "nope"}, {"history", "nope"}} {
		r := cliWith(t, store, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, "not found") {
			t.Errorf("duroxide %s: exit %d, stderr %q; want exit %d, not found", strings.Join(args, " "), r.code, r.stderr, exitFailed)
		}
		words := strings.Fields(r.stderr)
		for i := 1; i < len(words); i++ {
			if words[i] == words[i-1] {
				t.Errorf("duroxide %s: %q says %q twice", strings.Join(args, " "), r.stderr, words[i])
			}
		}
	}
}

// vet of packages the go command cannot find is bad input (exit 2), not
// problems found in the code (exit 1).
func TestVetOfMissingPackagesIsUsage(t *testing.T) {
	r := cliWith(t, nil, "vet", "./no/such/dir/...")
	if r.code != exitUsage || !strings.Contains(r.stderr, "cannot load the packages") || strings.Contains(r.stderr, "found problems") {
		t.Errorf("vet ./no/such/dir/...: exit %d, stderr %q; want exit %d, cannot load", r.code, r.stderr, exitUsage)
	}
}

// purge --dry-run lists and deletes nothing; at a terminal purge asks, and
// deletes only on yes.
func TestPurgeAsksAndDryRuns(t *testing.T) {
	store := sqliteWithWorkers(t)
	for _, id := range []string{"old-1", "old-2"} {
		if r := cliWith(t, store, "start", "Hello", "--id", id, "--input", `"x"`, "--wait", "1m"); r.code != 0 {
			t.Fatalf("start %s: exit %d %s", id, r.code, r.stderr)
		}
	}
	count := func() int {
		var page listPage
		decode(t, cliWith(t, store, "list", "-o", "json").stdout, &page)
		return len(page.Instances)
	}
	r := cliWith(t, store, "purge", "--all", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "would delete 2 root instances") || !strings.Contains(r.stdout, "old-1") || count() != 2 {
		t.Fatalf("purge --dry-run: exit %d, %q; %d instances left, want 2", r.code, r.stdout, count())
	}
	atTerminal := func(answer string, args ...string) result {
		var out, errOut bytes.Buffer
		code := run(t.Context(), append(append([]string{}, store...), args...), &out, &errOut, WithStdin(strings.NewReader(answer), true))
		return result{out.String(), errOut.String(), code}
	}
	r = atTerminal("n\n", "purge", "--all")
	if r.code != exitFailed || !strings.Contains(r.stderr, "Delete 2 finished root instances") || count() != 2 {
		t.Fatalf("purge answered no: exit %d, stderr %q; %d instances left, want 2", r.code, r.stderr, count())
	}
	r = atTerminal("y\n", "purge", "--all")
	if r.code != 0 || !strings.Contains(r.stdout, "deleted 2 instances") || count() != 0 {
		t.Fatalf("purge answered yes: exit %d, %q %q; %d instances left", r.code, r.stdout, r.stderr, count())
	}
}

// start --event delivers the event with the start; cancel reaches the
// instance's code, which ends.
func TestStartWithEventAndCancel(t *testing.T) {
	store := sqliteWithWorkers(t)
	cli := func(args ...string) result { t.Helper(); return cliWith(t, store, args...) }
	r := cli("start", "Approval", "--id", "ev-1", "--input", `{"item": "desk", "timeout": 600000000000}`,
		"--event", `approval={"approved": true, "by": "cli"}`, "--wait", "1m")
	if r.code != 0 || !strings.Contains(r.stdout, "Completed") || !strings.Contains(r.stdout, "cli") {
		t.Fatalf("start --event: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range []string{"=1", "approval={not json"} {
		if r := cli("start", "Approval", "--event", bad); r.code != exitUsage {
			t.Errorf("start --event %q: exit %d, want %d", bad, r.code, exitUsage)
		}
	}
	if r := cli("start", "Approval", "--id", "cancel-1", "--input", `{"item": "desk", "timeout": 600000000000}`); r.code != 0 {
		t.Fatalf("start: exit %d %s", r.code, r.stderr)
	}
	if r := cli("cancel", "cancel-1", "--reason", "changed my mind"); r.code != 0 || !strings.Contains(r.stdout, "cancellation of cancel-1 requested") {
		t.Fatalf("cancel: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = cli("wait", "cancel-1", "--timeout", "1m")
	if !strings.Contains(r.stdout, "Failed") || !strings.Contains(strings.ToLower(r.stdout), "cancel") {
		t.Errorf("wait after cancel: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("cancel", "nope"); r.code != exitFailed || !strings.Contains(r.stderr, "not found") {
		t.Errorf("cancel of an unknown instance: exit %d %q", r.code, r.stderr)
	}
}

// history of the retry sample: times, the activity named on its
// completions with how long each attempt took, and the backoff timers
// labelled; --execution and --all-executions show a continue-as-new chain.
func TestHistoryShowsTimesNamesAndTimerPurposes(t *testing.T) {
	store := sqliteWithWorkers(t)
	cli := func(args ...string) result { t.Helper(); return cliWith(t, store, args...) }
	if r := cli("start", "Retry", "--id", "pay-1", "--input", `"pay-1"`, "--wait", "1m"); r.code != 0 {
		t.Fatalf("start Retry: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	out := cli("history", "pay-1").stdout
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "TIME") || !strings.Contains(lines[0], "TOOK") {
		t.Fatalf("history header: %q", lines[0])
	}
	count := func(kind, name string) (n int) {
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			if len(f) > 3 && f[2] == kind && f[3] == name {
				n++
			}
		}
		return n
	}
	if count("ActivityFailed", "FlakyCharge") != 2 || count("ActivityCompleted", "FlakyCharge") != 1 ||
		count("TimerCreated", "retry") != 2 || count("TimerFired", "retry") != 2 {
		t.Errorf("history of the retry sample: want 2 failed attempts, 1 completed, 2 retry backoff timers created and fired:\n%s", out)
	}
	if !strings.Contains(out, "(retry backoff of FlakyCharge after attempt 1)") || !strings.Contains(out, "+") {
		t.Errorf("history does not say what the timers are for, or when:\n%s", out)
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 3 && strings.HasPrefix(f[2], "Activity") && f[2] != "ActivityScheduled" && !strings.HasSuffix(f[5], "s") {
			t.Errorf("a completion without its duration: %q", l)
		}
	}

	// Counter continues as new: each execution's history on its own, or all.
	if r := cli("start", "Counter", "--id", "count-1", "--input", `{"count": 0, "limit": 2}`, "--wait", "1m"); r.code != 0 {
		t.Fatalf("start Counter: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	first := cli("history", "count-1", "--execution", "1").stdout
	if !strings.Contains(first, "OrchestrationContinuedAsNew") {
		t.Errorf("history --execution 1 of a continued instance:\n%s", first)
	}
	all := cli("history", "count-1", "--all-executions").stdout
	if !strings.Contains(all, "execution 1\n") || !strings.Contains(all, "execution 2\n") {
		t.Errorf("history --all-executions:\n%s", all)
	}
	for _, bad := range [][]string{{"history", "count-1", "--execution", "-1"}, {"history", "count-1", "--execution", "1", "--all-executions"}} {
		if r := cli(bad...); r.code != exitUsage {
			t.Errorf("duroxide %s: exit %d, want %d", strings.Join(bad, " "), r.code, exitUsage)
		}
	}
}

func TestOldestReady(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	if got := oldestReady(provider.QueueDepths{}, now); got != "" {
		t.Errorf("nothing waits: %q", got)
	}
	q := provider.QueueDepths{OldestOrchestrator: now.Add(-90 * time.Second), OldestWorker: now.Add(-3 * time.Hour)}
	if got := oldestReady(q, now); got != "; oldest ready waits: orchestrator 1m, worker 3h" {
		t.Errorf("oldest ready: %q", got)
	}
}
