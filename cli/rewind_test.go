package cli

import (
	"strings"
	"testing"
)

// rewind and retry run a failed instance again as a new execution and say
// what they kept; what cannot be rewound is refused with the reason.
func TestRewindAndRetry(t *testing.T) {
	store := sqliteWithWorkers(t)
	cli := func(args ...string) result { t.Helper(); return cliWith(t, store, args...) }
	// Greet fails for an empty name: Hello fails, and fails again when run again.
	if r := cli("start", "Hello", "--id", "nameless", "--input", `""`, "--wait", "1m"); r.code != exitFailed {
		t.Fatalf("start nameless: exit %d %s", r.code, r.stderr)
	}
	r := cli("rewind", "nameless", "--wait", "1m")
	if r.code != exitFailed || !strings.Contains(r.stdout, "nameless: execution 2 runs from before Greet (keeps 1 of the failed execution's events, runs 3 again)") ||
		!strings.Contains(r.stderr, "instance nameless ended Failed") {
		t.Errorf("rewind --wait: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var v rewindView
	r = cli("retry", "nameless", "-o", "json")
	decode(t, r.stdout, &v)
	if r.code != 0 || v.Execution != 3 || v.Kept != 1 || v.Step != "" {
		t.Errorf("retry -o json: exit %d %+v %s", r.code, v, r.stderr)
	}
	if r := cli("wait", "nameless", "--timeout", "1m"); r.code != exitFailed {
		t.Errorf("wait after retry: exit %d", r.code)
	}
	if r := cli("history", "nameless", "--all-executions"); r.code != 0 || strings.Count(r.stdout, "execution ") != 3 {
		t.Errorf("history --all-executions after rewind and retry: exit %d, want 3 executions:\n%s", r.code, r.stdout)
	}

	if r := cli("start", "Hello", "--id", "fine", "--input", `"x"`, "--wait", "1m"); r.code != 0 {
		t.Fatalf("start fine: exit %d %s", r.code, r.stderr)
	}
	for args, want := range map[string]string{
		"rewind fine":         "cannot be rewound: it is Completed, not Failed",
		"retry nobody":        `rewind "nobody": not found`,
		"rewind":              "rewind takes 1 argument(s)",
		"rewind x --wait=-1s": "--wait must not be negative",
	} {
		r := cli(strings.Fields(args)...)
		code := exitFailed
		if strings.HasPrefix(args, "rewind x") || args == "rewind" {
			code = exitUsage
		}
		if r.code != code || !strings.Contains(r.stderr, want) {
			t.Errorf("duroxide %s: exit %d %q, want exit %d saying %q", args, r.code, r.stderr, code, want)
		}
	}
}
