package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// sim drives one instance through turns in memory: each ack's delta becomes
// history, as the provider would store it. No I/O, no dispatchers.
type sim struct {
	t        *testing.T
	reg      *Registry
	instance string
	exec     int64
	history  []provider.Event
	custom   *string
	status   provider.ExecutionStatus
	now      time.Time
	last     provider.OrchestrationAck
	// lastQuiet is the last turn's quiet set (quiet.go).
	lastQuiet *QuietWaits
	// local runs WithLocal activities; nil queues them for workers.
	local *LocalRunner
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newSim(t *testing.T, reg *Registry) *sim {
	return &sim{t: t, reg: reg, instance: "inst", now: time.UnixMilli(1_700_000_000_000)}
}

// turn runs one turn with msgs and returns the ack or the engine's error.
func (s *sim) turn(msgs ...provider.WorkItem) (provider.OrchestrationAck, error) {
	s.t.Helper()
	s.now = s.now.Add(time.Second)
	item := &provider.OrchestrationItem{Instance: s.instance, Exists: s.exec > 0, ExecutionID: max(s.exec, 1),
		Status: s.status, History: s.history, Messages: msgs, CustomStatus: s.custom}
	in, v := PrepareTurn(item, s.now)
	if v != RunIt {
		return provider.OrchestrationAck{}, nil
	}
	in.Local = s.local
	ack, quietSet, err := RunTurn(s.reg, in, quiet)
	if err != nil {
		return ack, err
	}
	s.lastQuiet = quietSet
	if ack.ExecutionID != s.exec {
		s.history = nil
		s.exec = ack.ExecutionID
	}
	s.history = append(s.history, ack.HistoryDelta...)
	if ack.Metadata.Status != "" {
		s.status = ack.Metadata.Status
	} else if len(ack.HistoryDelta) > 0 && ack.HistoryDelta[0].Kind == provider.EventOrchestrationStarted {
		s.status = provider.StatusRunning
	}
	if cs := ack.Metadata.CustomStatus; cs != nil {
		v := cs.Value
		s.custom = &v
		if cs.Clear {
			s.custom = nil
		}
	}
	s.last = ack
	return ack, nil
}

func (s *sim) mustTurn(msgs ...provider.WorkItem) provider.OrchestrationAck {
	s.t.Helper()
	ack, err := s.turn(msgs...)
	if err != nil {
		s.t.Fatalf("turn: %v", err)
	}
	return ack
}

func start(name string, input any) provider.WorkItem {
	in, _ := EncodePayload(input)
	return provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: "inst", Name: name, Input: in, ExecutionID: 1}
}

func done(exec, id int64, result any) provider.WorkItem {
	r, _ := EncodePayload(result)
	return provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "inst", ExecutionID: exec, ID: id, Result: r}
}

func failed(exec, id int64, msg string) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkActivityFailed, Instance: "inst", ExecutionID: exec, ID: id,
		Error: &provider.ErrorDetails{Class: ErrorApplication, Message: msg}}
}

func fired(exec, id int64) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkTimerFired, Instance: "inst", ExecutionID: exec, ID: id}
}

func raised(name string, data any) provider.WorkItem {
	d, _ := EncodePayload(data)
	return provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: "inst", Name: name, Input: d}
}

func eventKinds(evs []provider.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Kind))
	}
	return strings.Join(out, ",")
}

func registry(t *testing.T, register func(r *Registry)) *Registry {
	r := NewRegistry()
	register(r)
	return r
}

func helloRegistry(t *testing.T) *Registry {
	return registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Hello", func(ctx *OrchestrationContext, name string) (string, error) {
			return Await[string](ctx.CallActivity("Greet", name))
		})
	})
}

func TestReplayTable(t *testing.T) {
	cases := []struct {
		name   string
		reg    func(t *testing.T) *Registry
		turns  [][]provider.WorkItem
		kinds  string // history delta of the last turn
		status provider.ExecutionStatus
		output string
	}{
		{
			name:  "fresh run schedules the activity",
			reg:   helloRegistry,
			turns: [][]provider.WorkItem{{start("Hello", "Ada")}},
			kinds: "OrchestrationStarted,ActivityScheduled",
		},
		{
			name:   "completion replays and finishes",
			reg:    helloRegistry,
			turns:  [][]provider.WorkItem{{start("Hello", "Ada")}, {done(1, 2, "Hello, Ada")}},
			kinds:  "ActivityCompleted,OrchestrationCompleted",
			status: provider.StatusCompleted, output: `"Hello, Ada"`,
		},
		{
			name: "partial fan-in waits for the rest",
			reg:  fanRegistry,
			turns: [][]provider.WorkItem{{start("Fan", 3)}, {done(1, 3, 10)},
				{done(1, 2, 1)}},
			kinds: "ActivityCompleted",
		},
		{
			name:   "fan-in completes with all results, in any arrival order",
			reg:    fanRegistry,
			turns:  [][]provider.WorkItem{{start("Fan", 3)}, {done(1, 4, 100), done(1, 2, 1)}, {done(1, 3, 10)}},
			kinds:  "ActivityCompleted,OrchestrationCompleted",
			status: provider.StatusCompleted, output: `111`,
		},
		{
			name:   "activity failure fails the orchestration",
			reg:    helloRegistry,
			turns:  [][]provider.WorkItem{{start("Hello", "Ada")}, {failed(1, 2, "no greeting")}},
			kinds:  "ActivityFailed,OrchestrationFailed",
			status: provider.StatusFailed,
		},
		{
			name:   "duplicate completion is recorded once",
			reg:    helloRegistry,
			turns:  [][]provider.WorkItem{{start("Hello", "Ada")}, {done(1, 2, "first"), done(1, 2, "second")}},
			kinds:  "ActivityCompleted,OrchestrationCompleted",
			status: provider.StatusCompleted, output: `"first"`,
		},
		{
			name:   "completion of an earlier execution is dropped",
			reg:    helloRegistry,
			turns:  [][]provider.WorkItem{{start("Hello", "Ada")}, {done(7, 2, "stale")}},
			kinds:  "",
			status: provider.StatusRunning,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, c.reg(t))
			for _, msgs := range c.turns {
				s.mustTurn(msgs...)
			}
			if got := eventKinds(s.last.HistoryDelta); got != c.kinds {
				t.Fatalf("last delta = %s, want %s", got, c.kinds)
			}
			if c.status != "" && s.status != c.status {
				t.Fatalf("status = %s, want %s", s.status, c.status)
			}
			if c.output != "" && s.last.Metadata.Output != c.output {
				t.Fatalf("output = %s, want %s", s.last.Metadata.Output, c.output)
			}
		})
	}
}

func fanRegistry(t *testing.T) *Registry {
	return registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Fan", func(ctx *OrchestrationContext, n int) (int, error) {
			var fs []*Future
			for i := range n {
				fs = append(fs, ctx.CallActivity("Pow", i))
			}
			if err := ctx.WhenAll(fs...); err != nil {
				return 0, err
			}
			sum := 0
			for _, f := range fs {
				v, _ := Await[int](f)
				sum += v
			}
			return sum, nil
		})
	})
}

// The winner of a select is the one the history recorded first, whatever the
// replay sees.
func TestSelectResolvesInHistoryOrder(t *testing.T) {
	race := func(t *testing.T) *Registry {
		return registry(t, func(r *Registry) {
			RegisterOrchestration(r, "Race", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
				act := ctx.CallActivity("Slow", nil)
				timer := ctx.CreateTimer(time.Minute)
				if ctx.Select(act, timer) == 1 {
					return "timeout", nil
				}
				return "activity", nil
			})
		})
	}
	for _, c := range []struct {
		name  string
		order []provider.WorkItem
		want  string
	}{
		{"timer first", []provider.WorkItem{fired(1, 3), done(1, 2, "x")}, `"timeout"`},
		{"activity first", []provider.WorkItem{done(1, 2, "x"), fired(1, 3)}, `"activity"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, race(t))
			s.mustTurn(start("Race", nil))
			s.mustTurn(c.order...)
			if s.last.Metadata.Output != c.want {
				t.Fatalf("output = %s, want %s", s.last.Metadata.Output, c.want)
			}
			// Replaying the full history gives the same answer and no new decisions.
			in := TurnInput{instance: "inst", executionID: 1, history: s.history, now: s.now}
			ack, err := runTurn(s.reg, in, quiet)
			if err != nil || len(ack.HistoryDelta) != 0 {
				t.Fatalf("replay of a finished history: delta %s, err %v", eventKinds(ack.HistoryDelta), err)
			}
		})
	}
}

func TestNondeterminism(t *testing.T) {
	version := 0
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Changing", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			switch version {
			case 0:
				return Await[string](ctx.CallActivity("Greet", "a"))
			case 1:
				return Await[string](ctx.CallActivity("Farewell", "a"))
			case 2:
				return "", ctx.CreateTimer(time.Second).Await(nil)
			default:
				return "early", nil
			}
		})
	})
	for _, c := range []struct {
		version          int
		expected, actual string
	}{
		{1, `ActivityScheduled "Greet"`, `ActivityScheduled "Farewell"`},
		{2, `ActivityScheduled "Greet"`, `TimerCreated`},
		{3, `ActivityScheduled "Greet"`, `the orchestration returned`},
	} {
		t.Run(fmt.Sprintf("version %d", c.version), func(t *testing.T) {
			version = 0
			s := newSim(t, reg)
			s.mustTurn(start("Changing", nil))
			version = c.version
			_, err := s.turn(done(1, 2, "x"))
			var nd *NondeterminismError
			if !errors.As(err, &nd) {
				t.Fatalf("err = %v, want NondeterminismError", err)
			}
			if nd.Expected != c.expected || nd.Actual != c.actual || nd.EventID != 2 {
				t.Fatalf("got expected=%q actual=%q event=%d, want %q / %q / 2", nd.Expected, nd.Actual, nd.EventID, c.expected, c.actual)
			}
			t.Log(err)
		})
	}
}

func TestContinueAsNew(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Counter", func(ctx *OrchestrationContext, n int) (int, error) {
			if n >= 2 {
				return n, nil
			}
			if err := ctx.CreateTimer(time.Second).Await(nil); err != nil {
				return 0, err
			}
			return 0, ctx.ContinueAsNew(n + 1)
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Counter", 0))
	ack := s.mustTurn(fired(1, 2))
	if s.status != provider.StatusContinuedAsNew || ack.Metadata.Output != "1" {
		t.Fatalf("status %s output %s, want ContinuedAsNew 1", s.status, ack.Metadata.Output)
	}
	if len(ack.OrchestratorItems) != 1 || ack.OrchestratorItems[0].Kind != provider.WorkContinueAsNew {
		t.Fatalf("orchestrator items %+v, want one ContinueAsNew", ack.OrchestratorItems)
	}
	ack = s.mustTurn(ack.OrchestratorItems[0])
	if ack.ExecutionID != 2 || eventKinds(ack.HistoryDelta) != "OrchestrationStarted,TimerCreated" || ack.HistoryDelta[0].ID != 1 {
		t.Fatalf("second execution: exec %d delta %s", ack.ExecutionID, eventKinds(ack.HistoryDelta))
	}
	ack = s.mustTurn(fired(2, 2))
	ack = s.mustTurn(ack.OrchestratorItems[0])
	if ack.ExecutionID != 3 || s.status != provider.StatusCompleted || ack.Metadata.Output != "2" {
		t.Fatalf("third execution: exec %d status %s output %s", ack.ExecutionID, s.status, ack.Metadata.Output)
	}
}

func TestExternalEvents(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Approval", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			ev := ctx.WaitForEvent("approve")
			if ctx.Select(ev, ctx.CreateTimer(time.Hour)) == 1 {
				return "expired", nil
			}
			return Await[string](ev)
		})
	})
	t.Run("event before the timer", func(t *testing.T) {
		s := newSim(t, reg)
		s.mustTurn(start("Approval", nil))
		s.mustTurn(raised("approve", "yes"))
		if s.last.Metadata.Output != `"yes"` {
			t.Fatalf("output %s", s.last.Metadata.Output)
		}
	})
	t.Run("timer before the event", func(t *testing.T) {
		s := newSim(t, reg)
		s.mustTurn(start("Approval", nil))
		s.mustTurn(fired(1, 3), raised("approve", "late"))
		if s.last.Metadata.Output != `"expired"` {
			t.Fatalf("output %s", s.last.Metadata.Output)
		}
	})
	t.Run("event raised before anyone waits is kept", func(t *testing.T) {
		reg := registry(t, func(r *Registry) {
			RegisterOrchestration(r, "Late", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
				if err := ctx.CreateTimer(time.Second).Await(nil); err != nil {
					return "", err
				}
				return Await[string](ctx.WaitForEvent("go"))
			})
		})
		s := newSim(t, reg)
		s.mustTurn(start("Late", nil))
		s.mustTurn(raised("go", "early bird"))
		s.mustTurn(fired(1, 2))
		if s.status != provider.StatusCompleted || s.last.Metadata.Output != `"early bird"` {
			t.Fatalf("status %s output %s", s.status, s.last.Metadata.Output)
		}
	})
}

// Keyed events are recorded once per key, whether the repeat arrives in the
// same turn or after the first one is in history; events without a key are not
// deduplicated.
func TestKeyedEventsAreRecordedOnce(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Collect", func(ctx *OrchestrationContext, n int) ([]string, error) {
			var got []string
			for range n {
				v, err := Await[string](ctx.WaitForEvent("item"))
				if err != nil {
					return nil, err
				}
				got = append(got, v)
			}
			return got, nil
		})
	})
	keyed := func(key, data string) provider.WorkItem {
		m := raised("item", data)
		m.Key = key
		return m
	}
	s := newSim(t, reg)
	s.mustTurn(start("Collect", 3))
	s.mustTurn(keyed("a", "a1"), keyed("a", "a2"))
	s.mustTurn(keyed("a", "a3"), keyed("b", "b1"))
	s.mustTurn(raised("item", "plain"), keyed("b", "b2"))
	if s.status != provider.StatusCompleted || s.last.Metadata.Output != `["a1","b1","plain"]` {
		t.Fatalf("status %s output %s, want a1,b1,plain", s.status, s.last.Metadata.Output)
	}
}

func TestTerminateCancelsActivitiesAndChildren(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Parent", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			a := ctx.CallActivity("Work", nil)
			c := ctx.CallSubOrchestration("Child", nil, WithInstanceID("kid"))
			return "", ctx.WhenAll(a, c)
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Parent", nil))
	ack := s.mustTurn(provider.WorkItem{Kind: provider.WorkCancelInstance, Instance: "inst", Reason: "by test"})
	if s.status != provider.StatusTerminated {
		t.Fatalf("status %s", s.status)
	}
	if len(ack.CancelledActivities) != 1 || ack.CancelledActivities[0].ActivityID != 2 {
		t.Fatalf("cancelled %+v, want activity 2", ack.CancelledActivities)
	}
	if len(ack.OrchestratorItems) != 1 || ack.OrchestratorItems[0].Kind != provider.WorkCancelInstance || ack.OrchestratorItems[0].Instance != "kid" {
		t.Fatalf("orchestrator items %+v, want CancelInstance for kid", ack.OrchestratorItems)
	}
	if f := DecodeFailure(ack.Metadata.Output); !strings.Contains(f.Message, "by test") {
		t.Fatalf("failure %+v", f)
	}
}

func TestSubOrchestration(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Parent", func(ctx *OrchestrationContext, _ struct{}) (int, error) {
			return Await[int](ctx.CallSubOrchestration("Child", 20))
		})
	})
	s := newSim(t, reg)
	ack := s.mustTurn(start("Parent", nil))
	child := ack.OrchestratorItems[0]
	if child.Kind != provider.WorkStartOrchestration || child.ParentInstance != "inst" || child.ParentID != 2 || child.Instance != "inst::1::1" {
		t.Fatalf("child start %+v", child)
	}
	s.mustTurn(provider.WorkItem{Kind: provider.WorkSubOrchCompleted, Instance: "inst", ExecutionID: 1, ID: 2, Result: "21"})
	if s.last.Metadata.Output != "21" {
		t.Fatalf("output %s", s.last.Metadata.Output)
	}
}

func TestPanicFailsTheOrchestration(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Boom", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			ctx.Go(func(ctx *OrchestrationContext) (any, error) { panic("kaboom") })
			return Await[string](ctx.CallActivity("Never", nil))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Boom", nil))
	if s.status != provider.StatusFailed || !strings.Contains(s.last.Metadata.Output, "kaboom") {
		t.Fatalf("status %s output %s", s.status, s.last.Metadata.Output)
	}
}

func TestCustomStatusOnlySentWhenChanged(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Steps", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			ctx.SetCustomStatus("step 1")
			if err := ctx.CreateTimer(time.Second).Await(nil); err != nil {
				return "", err
			}
			if err := ctx.CreateTimer(time.Second).Await(nil); err != nil {
				return "", err
			}
			ctx.SetCustomStatus("step 2")
			return "ok", nil
		})
	})
	s := newSim(t, reg)
	if ack := s.mustTurn(start("Steps", nil)); ack.Metadata.CustomStatus == nil || ack.Metadata.CustomStatus.Value != `"step 1"` {
		t.Fatalf("first turn custom status %+v", ack.Metadata.CustomStatus)
	}
	if ack := s.mustTurn(fired(1, 2)); ack.Metadata.CustomStatus != nil {
		t.Fatalf("unchanged custom status sent again: %+v", ack.Metadata.CustomStatus)
	}
	if ack := s.mustTurn(fired(1, 4)); ack.Metadata.CustomStatus == nil || ack.Metadata.CustomStatus.Value != `"step 2"` {
		t.Fatalf("last turn custom status %+v", ack.Metadata.CustomStatus)
	}
}

func TestDeterministicNowAndGUID(t *testing.T) {
	var seen []string
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Clock", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			first := ctx.Now().UnixMilli()
			id := ctx.NewGUID()
			seen = append(seen, fmt.Sprintf("%d %s %v", first, id, ctx.IsReplaying()))
			return "", ctx.CreateTimer(time.Second).Await(nil)
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Clock", nil))
	s.mustTurn(fired(1, 2))
	if len(seen) != 2 || strings.TrimSuffix(seen[0], " false") != strings.TrimSuffix(seen[1], " true") {
		t.Fatalf("first run and replay saw %q", seen)
	}
}

func TestRetryPolicyRetriesWithDurableBackoff(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Flaky", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			return Await[string](ctx.CallActivity("Flaky", nil, WithRetry(RetryPolicy{MaxAttempts: 3, Backoff: BackoffFixed, InitialInterval: time.Second})))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Flaky", nil)) // 2: attempt 1
	if ack := s.mustTurn(failed(1, 2, "try again")); eventKinds(ack.HistoryDelta) != "ActivityFailed,TimerCreated" {
		t.Fatalf("after first failure: %s", eventKinds(ack.HistoryDelta))
	}
	s.mustTurn(fired(1, 4))               // 5: fired, 6: attempt 2
	s.mustTurn(failed(1, 6, "try again")) // 7: failed, 8: backoff timer
	s.mustTurn(fired(1, 8))               // 9: fired, 10: attempt 3
	s.mustTurn(done(1, 10, "third time lucky"))
	if s.status != provider.StatusCompleted || s.last.Metadata.Output != `"third time lucky"` {
		t.Fatalf("status %s output %s", s.status, s.last.Metadata.Output)
	}
}

func TestRetryPolicyGivesUpAfterMaxAttempts(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Flaky", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			return Await[string](ctx.CallActivity("Flaky", nil, WithRetry(RetryPolicy{MaxAttempts: 2})))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Flaky", nil))
	s.mustTurn(failed(1, 2, "no"))
	s.mustTurn(fired(1, 4))
	s.mustTurn(failed(1, 6, "still no"))
	if s.status != provider.StatusFailed || !strings.Contains(s.last.Metadata.Output, "still no") {
		t.Fatalf("status %s output %s", s.status, s.last.Metadata.Output)
	}
}

func TestRetryTimeoutCancelsTheAttempt(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Slow", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			_, err := Await[string](ctx.CallActivity("Slow", nil, WithRetry(RetryPolicy{MaxAttempts: 1, Timeout: time.Minute})))
			if errors.Is(err, ErrTimeout) {
				return "timed out", nil
			}
			return "", err
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Slow", nil)) // 2: activity, 3: timeout timer
	ack := s.mustTurn(fired(1, 3))
	if len(ack.CancelledActivities) != 1 || ack.CancelledActivities[0].ActivityID != 2 {
		t.Fatalf("cancelled %+v", ack.CancelledActivities)
	}
	if s.last.Metadata.Output != `"timed out"` {
		t.Fatalf("output %s", s.last.Metadata.Output)
	}
}

func TestUnregisteredOrchestrationIsConfigurationError(t *testing.T) {
	s := newSim(t, NewRegistry())
	_, err := s.turn(start("Nope", nil))
	var ce *configError
	if !errors.As(err, &ce) || DetailsOf(err).Class != ErrorConfiguration {
		t.Fatalf("err = %v, want a configuration error", err)
	}
}

func TestNoGoroutineOutlivesItsTurn(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Waiter", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			for range 5 {
				ctx.Go(func(ctx *OrchestrationContext) (any, error) { return nil, ctx.WaitForEvent("never").Await(nil) })
			}
			return Await[string](ctx.WaitForEvent("never"))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Waiter", nil))
	deadline := time.Now().Add(10 * time.Second)
	for range 100 {
		s.mustTurn(raised("other", nil))
	}
	_ = context.Background()
	for time.Now().Before(deadline) {
		if n := countGoroutines(); n < 50 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines alive after 101 turns of 6 blocked coroutines each", countGoroutines())
}

func TestDetachedStartOutlivesTheCaller(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Launcher", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			if err := ctx.StartOrchestration("Hello", "detached-1", "Bob"); err != nil {
				return "", err
			}
			return "launched", nil
		})
	})
	s := newSim(t, reg)
	ack := s.mustTurn(start("Launcher", nil))
	if eventKinds(ack.HistoryDelta) != "OrchestrationStarted,OrchestrationChained,OrchestrationCompleted" {
		t.Fatalf("delta %s", eventKinds(ack.HistoryDelta))
	}
	if len(ack.OrchestratorItems) != 1 {
		t.Fatalf("orchestrator items %+v", ack.OrchestratorItems)
	}
	child := ack.OrchestratorItems[0]
	if child.Kind != provider.WorkStartOrchestration || child.Instance != "detached-1" || child.ParentInstance != "" || child.Input != `"Bob"` {
		t.Fatalf("detached start %+v: want a parentless start of detached-1", child)
	}
}

func TestVersionsPinnedAtStart(t *testing.T) {
	var ran []string
	reg := registry(t, func(r *Registry) {
		for _, v := range []string{"1.0.0", "2.0.0"} {
			RegisterOrchestrationVersion(r, "Versioned", v, func(ctx *OrchestrationContext, _ struct{}) (string, error) {
				ran = append(ran, v+" "+ctx.Version())
				if err := ctx.CreateTimer(time.Second).Await(nil); err != nil {
					return "", err
				}
				return v, nil
			})
		}
	})
	latest := newSim(t, reg)
	if ack := latest.mustTurn(start("Versioned", nil)); ack.Metadata.OrchestrationVersion != "2.0.0" {
		t.Fatalf("new instance pinned to %q, want the latest 2.0.0", ack.Metadata.OrchestrationVersion)
	}
	pinned := newSim(t, reg)
	old := start("Versioned", nil)
	old.Version = "1.0.0"
	pinned.mustTurn(old)
	pinned.mustTurn(fired(1, 2))
	if pinned.last.Metadata.Output != `"1.0.0"` {
		t.Fatalf("instance started on 1.0.0 finished with %s", pinned.last.Metadata.Output)
	}
	if got := strings.Join(ran, ","); got != "2.0.0 2.0.0,1.0.0 1.0.0,1.0.0 1.0.0" {
		t.Fatalf("code runs %s", got)
	}
	r := NewRegistry()
	if err := r.AddOrchestration("X", "not-a-version", func(*OrchestrationContext, string) (string, error) { return "", nil }); err == nil {
		t.Fatal("invalid version accepted")
	}
}
