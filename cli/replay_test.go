package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

// sampleCode is the samples' registry; changed swaps Chain's second step, as
// an incompatible deploy would.
func sampleCode(changed bool) *runtime.Registry {
	reg := runtime.NewRegistry()
	samples.Register(reg)
	if !changed {
		return reg
	}
	next := runtime.NewRegistry()
	runtime.RegisterActivity(next, "Reverse", func(_ context.Context, s string) (string, error) { return s, nil })
	runtime.RegisterActivity(next, "Exclaim", func(_ context.Context, s string) (string, error) { return s + "!", nil })
	runtime.RegisterOrchestration(next, "Chain", func(ctx *runtime.OrchestrationContext, s string) (string, error) {
		for _, step := range []string{"Reverse", "Exclaim"} { // "Upper" removed
			var err error
			if s, err = runtime.Await[string](ctx.CallActivity(step, s)); err != nil {
				return "", err
			}
		}
		return s, nil
	})
	return next
}

func replayCLI(t *testing.T, reg *runtime.Registry, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx := t.Context()
	root := &cli{stdout: &out, registry: reg}
	cmd := root.rootCommand()
	cmd.SetArgs(args)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(ctx)
	root.close()
	code := 0
	if err != nil {
		errOut.WriteString(err.Error())
		code = exitFailed
		if _, ok := err.(*usageError); ok {
			code = exitUsage
		}
	}
	return result{out.String(), errOut.String(), code}
}

// A history recorded with one build replays against the same code and
// reports the first mismatch against a changed one: from a store and from
// `duroxide history -o json` output.
func TestReplayCommand(t *testing.T) {
	store := sqliteWithWorkers(t)
	if r := cliWith(t, store, "start", "Chain", "--id", "chain-1", "--input", `"abc"`, "--wait", "1m"); r.code != 0 {
		t.Fatalf("start: %d %s%s", r.code, r.stdout, r.stderr)
	}
	history := cliWith(t, store, "history", "chain-1", "-o", "json").stdout
	file := filepath.Join(t.TempDir(), "chain-1.json")
	if err := os.WriteFile(file, []byte(history), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{"replay", "chain-1"}, {"replay", "--file", file}} {
		r := replayCLI(t, sampleCode(false), "", append(store, args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "ok ") || !strings.Contains(r.stdout, "0 did not match") {
			t.Fatalf("%v with unchanged code: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		r = replayCLI(t, sampleCode(true), "", append(store, args...)...)
		if r.code != exitFailed || !strings.Contains(r.stdout, `MISMATCH`) ||
			!strings.Contains(r.stdout, `event 4: the history records ActivityScheduled "Upper"; the code now does ActivityScheduled "Exclaim"`) {
			t.Fatalf("%v with changed code: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}

	r := replayCLI(t, sampleCode(true), history, "replay", "-f", "-", "-o", "json")
	var results []replayResult
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 1 || results[0].Mismatch == nil ||
		results[0].Mismatch.EventID != 4 {
		t.Fatalf("json from stdin: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}

	if r := replayCLI(t, sampleCode(false), "", append(store, "replay", "--all")...); r.code != 0 || !strings.Contains(r.stdout, "0 histories replayed") {
		t.Fatalf("--all with no running instance: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := replayCLI(t, nil, "", append(store, "replay", "chain-1")...); r.code != exitUsage || !strings.Contains(r.stderr, "cli.Main(reg)") {
		t.Fatalf("without a registry: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := replayCLI(t, sampleCode(false), "[{", "replay", "-f", "-"); r.code != exitUsage || !strings.Contains(r.stderr, "is not a history") {
		t.Fatalf("a broken file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A history written by `duroxide history -o json` names its instance, so code
// that derives decisions from it (SubFanOut's children have default IDs)
// replays from the file as from the store. A file written before it named
// the instance replays with --instance, and says so without it.
func TestReplayFileNamesItsInstance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	p, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	startWorkers(t, p)
	store := []string{"--store", path}
	if r := cliWith(t, store, "start", "SubFanOut", "--id", "fan-1", "--input", `["Ada","Grace"]`, "--wait", "1m"); r.code != 0 {
		t.Fatalf("start: %d %s%s", r.code, r.stdout, r.stderr)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "fan-1.json")
	if err := os.WriteFile(file, []byte(cliWith(t, store, "history", "fan-1", "-o", "json").stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := p.ReadHistory(t.Context(), provider.ExecutionRequest{Instance: "fan-1"})
	if err != nil {
		t.Fatal(err)
	}
	bare, _ := json.Marshal(events)
	oldFile := filepath.Join(dir, "old.json")
	if err := os.WriteFile(oldFile, bare, 0o600); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{{"replay", "fan-1"}, {"replay", "--file", file}, {"replay", "--file", oldFile, "--instance", "fan-1"}} {
		r := replayCLI(t, sampleCode(false), "", append(store, args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "ok        fan-1  ") || !strings.Contains(r.stdout, "0 did not match") {
			t.Fatalf("%v with unchanged code: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	r := replayCLI(t, sampleCode(false), "", "replay", "--file", oldFile)
	if r.code != exitFailed || strings.Contains(r.stdout, "MISMATCH") || !strings.Contains(r.stdout, "--instance") {
		t.Fatalf("a file without its instance: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"replay", "--file", file, "--instance", "fan-2"}, {"replay", "fan-1", "--instance", "fan-1"}} {
		if r := replayCLI(t, sampleCode(false), "", append(store, args...)...); r.code != exitUsage {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		if code := run(t.Context(), args, &out, &out); code != 0 || !strings.HasPrefix(out.String(), "duroxide ") ||
			!strings.Contains(out.String(), "go1.") {
			t.Fatalf("%v: exit %d, printed %q", args, code, out.String())
		}
	}
}
