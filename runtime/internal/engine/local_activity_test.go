package engine

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// fakeLocal runs local activities in tests: Greet answers "Hello, <input>",
// Boom fails, Gate waits until `gate` runs have started (proving they run
// concurrently); names in missing are not "registered".
type fakeLocal struct {
	mu      sync.Mutex
	calls   []string
	missing map[string]bool
	gate    int
	started atomic.Int32
	open    chan struct{}
	stop    bool // every run reports a shutdown
}

func (f *fakeLocal) runner() *LocalRunner {
	f.open = make(chan struct{})
	return &LocalRunner{
		Has: func(name, _ string) bool { return !f.missing[name] },
		Run: f.run,
	}
}

func (f *fakeLocal) run(w provider.WorkItem, _ time.Duration) (provider.WorkItem, error) {
	f.mu.Lock()
	f.calls = append(f.calls, w.Name+":"+w.Input)
	f.mu.Unlock()
	if f.stop {
		return provider.WorkItem{}, ErrTurnInterrupted
	}
	switch w.Name {
	case "Boom":
		return provider.WorkItem{Kind: provider.WorkActivityFailed, Instance: w.Instance, ExecutionID: w.ExecutionID, ID: w.ID,
			Error: &provider.ErrorDetails{Class: ErrorApplication, Message: "boom"}}, nil
	case "Gate":
		if int(f.started.Add(1)) == f.gate {
			close(f.open)
		}
		select {
		case <-f.open:
		case <-time.After(5 * time.Second):
			return provider.WorkItem{}, errors.New("gate: the other local activities of the wave never started")
		}
	}
	out, _ := EncodePayload("Hello, " + strings.Trim(w.Input, `"`))
	return provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: w.Instance, ExecutionID: w.ExecutionID, ID: w.ID, Result: out}, nil
}

func (f *fakeLocal) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func localHello(r *Registry) {
	RegisterOrchestration(r, "Hello", func(ctx *OrchestrationContext, name string) (string, error) {
		greeting, err := Await[string](ctx.CallActivity("Greet", name, WithLocal()))
		if err != nil {
			return "", err
		}
		if _, err := Await[int](ctx.WaitForEvent("go")); err != nil {
			return "", err
		}
		return greeting, nil
	})
}

// A local activity runs inside the turn: its schedule and result are in the
// turn's delta, no work item is queued, and replay never runs it again.
func TestLocalActivityRunsInTheTurn(t *testing.T) {
	s := newSim(t, registry(t, localHello))
	f := &fakeLocal{}
	s.local = f.runner()
	ack := s.mustTurn(start("Hello", "ada"))
	if got := eventKinds(ack.HistoryDelta); got != "OrchestrationStarted,ActivityScheduled,ActivityCompleted,ExternalSubscribed" {
		t.Fatalf("first turn recorded %s", got)
	}
	if len(ack.WorkerItems) != 0 || len(ack.CancelledActivities) != 0 {
		t.Fatalf("first turn queued %v and cancelled %v, want nothing", ack.WorkerItems, ack.CancelledActivities)
	}
	ack = s.mustTurn(raised("go", 1))
	if ack.Metadata.Status != provider.StatusCompleted || ack.Metadata.Output != `"Hello, ada"` {
		t.Fatalf("second turn: %s %q, want Completed \"Hello, ada\"", ack.Metadata.Status, ack.Metadata.Output)
	}
	if n := f.callCount(); n != 1 {
		t.Fatalf("the local activity ran %d times, want once (replay must not run it)", n)
	}
}

// The same history replays whether the activity runs locally or not: the
// option is not part of the decision.
func TestLocalActivityHistoryReplaysWithoutRunner(t *testing.T) {
	s := newSim(t, registry(t, localHello))
	f := &fakeLocal{}
	s.local = f.runner()
	s.mustTurn(start("Hello", "ada"))
	s.local = nil
	ack := s.mustTurn(raised("go", 1))
	if ack.Metadata.Status != provider.StatusCompleted || ack.Metadata.Output != `"Hello, ada"` {
		t.Fatalf("replay without a runner: %s %q, want Completed", ack.Metadata.Status, ack.Metadata.Output)
	}
}

// Without a runner, or without the code here, a local activity is queued for
// workers like any other.
func TestLocalActivityFallsBackToWorkers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		local func() *LocalRunner
	}{
		{"no runner", func() *LocalRunner { return nil }},
		{"no code here", func() *LocalRunner { return (&fakeLocal{missing: map[string]bool{"Greet": true}}).runner() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, registry(t, localHello))
			s.local = tc.local()
			ack := s.mustTurn(start("Hello", "ada"))
			if got := eventKinds(ack.HistoryDelta); got != "OrchestrationStarted,ActivityScheduled" {
				t.Fatalf("recorded %s", got)
			}
			if len(ack.WorkerItems) != 1 || ack.WorkerItems[0].Name != "Greet" || ack.WorkerItems[0].ID != 2 {
				t.Fatalf("queued %+v, want the Greet activity (ID 2)", ack.WorkerItems)
			}
			s.mustTurn(done(1, 2, "Hello, ada"))
			if ack := s.mustTurn(raised("go", 1)); ack.Metadata.Status != provider.StatusCompleted {
				t.Fatalf("status %s, want Completed", ack.Metadata.Status)
			}
		})
	}
}

// Local activities decided together run concurrently, and their results are
// recorded in decision order.
func TestLocalActivitiesRunConcurrently(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Fan", func(ctx *OrchestrationContext, _ struct{}) ([]string, error) {
			fs := []*Future{}
			for _, n := range []string{"a", "b", "c"} {
				fs = append(fs, ctx.CallActivity("Gate", n, WithLocal()))
			}
			if err := ctx.WhenAll(fs...); err != nil {
				return nil, err
			}
			var out []string
			for _, f := range fs {
				v, _ := Await[string](f)
				out = append(out, v)
			}
			return out, nil
		})
	})
	s := newSim(t, reg)
	f := &fakeLocal{gate: 3}
	s.local = f.runner()
	ack := s.mustTurn(start("Fan", struct{}{}))
	if ack.Metadata.Status != provider.StatusCompleted || ack.Metadata.Output != `["Hello, a","Hello, b","Hello, c"]` {
		t.Fatalf("%s %q %v, want Completed with three greetings", ack.Metadata.Status, ack.Metadata.Output, s.history)
	}
	var sources []int64
	for _, e := range ack.HistoryDelta {
		if e.Kind == provider.EventActivityCompleted {
			sources = append(sources, e.SourceID)
		}
	}
	if len(sources) != 3 || sources[0] != 2 || sources[1] != 3 || sources[2] != 4 {
		t.Fatalf("completions answer %v, want [2 3 4] in decision order", sources)
	}
}

// A failing local activity fails its future as a worker's failure would, and
// WithRetry retries it, each attempt in the turn that makes it.
func TestLocalActivityFailureAndRetry(t *testing.T) {
	var attempts []string
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Retry", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			_, err := Await[string](ctx.CallActivity("Boom", 1, WithLocal(),
				WithRetry(RetryPolicy{MaxAttempts: 2, Backoff: BackoffFixed, InitialInterval: time.Second, Timeout: time.Minute})))
			if !ctx.IsReplaying() {
				attempts = append(attempts, "done")
			}
			return "", err
		})
	})
	s := newSim(t, reg)
	f := &fakeLocal{}
	s.local = f.runner()
	ack := s.mustTurn(start("Retry", struct{}{}))
	// Attempt 1 ran and failed; its timeout timer is dropped; the backoff timer is queued.
	if got := eventKinds(ack.HistoryDelta); got != "OrchestrationStarted,ActivityScheduled,TimerCreated,ActivityFailed,CancelRequested,TimerCreated" {
		t.Fatalf("first turn recorded %s", got)
	}
	if len(ack.OrchestratorItems) != 1 || ack.OrchestratorItems[0].ID != 6 {
		t.Fatalf("first turn queued %+v, want only the backoff timer (ID 6)", ack.OrchestratorItems)
	}
	ack = s.mustTurn(fired(1, 6))
	if ack.Metadata.Status != provider.StatusFailed || !strings.Contains(ack.Metadata.Output, "boom") {
		t.Fatalf("after the retry: %s %q, want Failed with boom", ack.Metadata.Status, ack.Metadata.Output)
	}
	if n := f.callCount(); n != 2 {
		t.Fatalf("ran %d attempts, want 2", n)
	}
}

// A Select between local activities takes the first result in decision
// order; the loser's result is dropped and nothing is left to cancel.
func TestLocalActivitySelectLoser(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Race", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			a, b := ctx.CallActivity("Greet", "a", WithLocal()), ctx.CallActivity("Greet", "b", WithLocal())
			won := ctx.Select(a, b)
			if _, err := Await[int](ctx.WaitForEvent("go")); err != nil {
				return "", err
			}
			return Await[string]([]*Future{a, b}[won])
		})
	})
	s := newSim(t, reg)
	f := &fakeLocal{}
	s.local = f.runner()
	ack := s.mustTurn(start("Race", struct{}{}))
	if got := eventKinds(ack.HistoryDelta); got != "OrchestrationStarted,ActivityScheduled,ActivityScheduled,ActivityCompleted,CancelRequested,ExternalSubscribed" {
		t.Fatalf("recorded %s", got)
	}
	if len(ack.CancelledActivities) != 0 || len(ack.WorkerItems) != 0 {
		t.Fatalf("cancelled %v, queued %v: a local activity has no work item", ack.CancelledActivities, ack.WorkerItems)
	}
	if ack := s.mustTurn(raised("go", 1)); ack.Metadata.Output != `"Hello, a"` {
		t.Fatalf("output %q after replay, want \"Hello, a\"", ack.Metadata.Output)
	}
}

// A turn runs at most MaxLocalActivitiesPerTurn local activities; the next
// one is queued for a worker, and the following turn runs locally again.
func TestLocalActivitiesPerTurnBounded(t *testing.T) {
	const total = MaxLocalActivitiesPerTurn + 5
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Loop", func(ctx *OrchestrationContext, _ struct{}) (int, error) {
			for i := range total {
				if _, err := Await[string](ctx.CallActivity("Greet", i, WithLocal())); err != nil {
					return 0, err
				}
			}
			return total, nil
		})
	})
	s := newSim(t, reg)
	f := &fakeLocal{}
	s.local = f.runner()
	ack := s.mustTurn(start("Loop", struct{}{}))
	if n := f.callCount(); n != MaxLocalActivitiesPerTurn {
		t.Fatalf("the first turn ran %d local activities, want %d", n, MaxLocalActivitiesPerTurn)
	}
	if len(ack.WorkerItems) != 1 {
		t.Fatalf("the first turn queued %d work items, want the one past the bound", len(ack.WorkerItems))
	}
	w := ack.WorkerItems[0]
	ack = s.mustTurn(done(1, w.ID, "Hello"))
	if ack.Metadata.Status != provider.StatusCompleted || f.callCount() != total-1 {
		t.Fatalf("second turn: %s after %d local runs, want Completed after %d", ack.Metadata.Status, f.callCount(), total-1)
	}
}

// A local activity cut short by shutdown stops the turn with
// ErrTurnInterrupted: nothing of it is committed.
func TestLocalActivityInterruptedStopsTheTurn(t *testing.T) {
	s := newSim(t, registry(t, localHello))
	f := &fakeLocal{stop: true}
	s.local = f.runner()
	_, err := s.turn(start("Hello", "ada"))
	if !errors.Is(err, ErrTurnInterrupted) {
		t.Fatalf("turn error %v, want ErrTurnInterrupted", err)
	}
}
