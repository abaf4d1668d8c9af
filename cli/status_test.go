package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// status says what a running instance waits on; tree draws an instance
// and its sub-orchestrations with their statuses.
func TestStatusWaitingOnAndTree(t *testing.T) {
	store := sqliteWithWorkers(t)
	cli := func(args ...string) result { t.Helper(); return cliWith(t, store, args...) }
	if r := cli("start", "Approval", "--id", "wait-1", "--input", `{"item": "desk", "timeout": 3600000000000}`); r.code != 0 {
		t.Fatalf("start: exit %d %s", r.code, r.stderr)
	}
	var v statusView
	for deadline := time.Now().Add(30 * time.Second); len(v.WaitingOn) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		v = statusView{}
		_ = json.Unmarshal([]byte(cli("status", "wait-1", "-o", "json").stdout), &v)
	}
	if len(v.WaitingOn) != 2 || v.WaitingOn[0].Kind != "event" || v.WaitingOn[0].Name != "approval" ||
		v.WaitingOn[1].Kind != "timer" || v.WaitingOn[1].Due == nil || time.Until(*v.WaitingOn[1].Due) < 50*time.Minute {
		t.Fatalf("waiting on %+v; want the approval event, then the timer due in an hour", v.WaitingOn)
	}
	out := cli("status", "wait-1").stdout
	if !strings.Contains(out, "waiting on:") || !strings.Contains(out, "event approval for") || !strings.Contains(out, "timer due in ") {
		t.Errorf("status printed:\n%s", out)
	}

	if r := cli("start", "SubFanOut", "--id", "fan-1", "--input", `["a", "b"]`, "--wait", "1m"); r.code != 0 {
		t.Fatalf("start SubFanOut: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(cli("tree", "fan-1").stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "fan-1  SubFanOut  Completed") ||
		!strings.HasPrefix(lines[1], "├─ fan-1") || !strings.HasPrefix(lines[2], "└─ fan-1") || !strings.HasSuffix(lines[2], "Completed") {
		t.Errorf("tree printed:\n%s", strings.Join(lines, "\n"))
	}
	st := statusOf(t, cli("status", "fan-1", "-o", "json").stdout)
	if len(st.Children) != 2 || len(st.WaitingOn) != 0 {
		t.Errorf("status of a finished parent: children %v, waiting on %v", st.Children, st.WaitingOn)
	}
	if r := cli("tree", "nope"); r.code != exitFailed || !strings.Contains(r.stderr, "not found") {
		t.Errorf("tree of an unknown instance: exit %d %q", r.code, r.stderr)
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// history --follow prints the events recorded so far, then each new one,
// and returns when the instance ends.
func TestHistoryFollow(t *testing.T) {
	store := sqliteWithWorkers(t)
	if r := cliWith(t, store, "start", "Approval", "--id", "follow-1", "--input", `{"item": "desk", "timeout": 3600000000000}`); r.code != 0 {
		t.Fatalf("start: exit %d %s", r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append(append([]string{}, store...), "history", "follow-1", "--follow"), &out, &errOut)
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "TimerCreated"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("follow printed no timer yet:\n%s%s", out.String(), errOut.String())
		}
	}
	if r := cliWith(t, store, "raise", "follow-1", "approval", "--data", `{"approved": true, "by": "follower"}`); r.code != 0 {
		t.Fatalf("raise: exit %d %s", r.code, r.stderr)
	}
	select {
	case code := <-done:
		got := out.String()
		if code != 0 || !strings.Contains(got, "ExternalRaised") || !strings.Contains(got, "OrchestrationCompleted") || strings.Count(got, "TIME") != 1 {
			t.Errorf("follow: exit %d\n%s%s", code, got, errOut.String())
		}
	case <-ctx.Done():
		t.Fatalf("follow did not return when the instance completed:\n%s", out.String())
	}
	if r := cliWith(t, store, "history", "follow-1", "--follow", "-o", "json"); r.code != exitUsage {
		t.Errorf("history --follow -o json: exit %d, want %d", r.code, exitUsage)
	}
}

// watch of named instances prints their status changes and returns once
// each has ended; a finished one is not waited for.
func TestWatchNamedInstances(t *testing.T) {
	store := sqliteWithWorkers(t)
	if r := cliWith(t, store, "start", "Approval", "--id", "watched", "--input", `{"item": "desk", "timeout": 3600000000000}`); r.code != 0 {
		t.Fatalf("start: exit %d %s", r.code, r.stderr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append(append([]string{}, store...), "watch", "watched", "-o", "json"), &out, &errOut)
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), `"Running"`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("watch printed no current status:\n%s%s", out.String(), errOut.String())
		}
	}
	if r := cliWith(t, store, "raise", "watched", "approval", "--data", `{"approved": false, "by": "watcher"}`); r.code != 0 {
		t.Fatalf("raise: exit %d %s", r.code, r.stderr)
	}
	select {
	case code := <-done:
		var last watchEntry
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); code != 0 || err != nil || last.Instance != "watched" || last.Status != "Completed" {
			t.Errorf("watch: exit %d, last line %q (%v)\n%s", code, lines[len(lines)-1], err, errOut.String())
		}
	case <-ctx.Done():
		t.Fatalf("watch did not return when the instance completed:\n%s", out.String())
	}
	if r := cliWith(t, store, "watch", "watched"); r.code != 0 || !strings.Contains(r.stdout, "watched  Completed") {
		t.Errorf("watch of a finished instance: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := cliWith(t, store, "watch", "nope"); r.code != exitFailed || !strings.Contains(r.stderr, "not found") {
		t.Errorf("watch of an unknown instance: exit %d %q", r.code, r.stderr)
	}
}
