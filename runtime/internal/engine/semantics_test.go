package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// canItem returns the ContinueAsNew message an ack enqueued.
func canItem(t *testing.T, ack provider.OrchestrationAck) provider.WorkItem {
	t.Helper()
	for _, it := range ack.OrchestratorItems {
		if it.Kind == provider.WorkContinueAsNew {
			return it
		}
	}
	t.Fatalf("no ContinueAsNew in %v", ack.OrchestratorItems)
	return provider.WorkItem{}
}

// Item 1: a wait that lost a Select is cancelled and does not swallow the
// next event of its name ("wait with reminder").
func TestSelectLoserWaitDoesNotSwallowTheNextEvent(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Reminder", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			if ctx.Select(ctx.WaitForEvent("Signal"), ctx.CreateTimer(50*time.Millisecond)) == 0 {
				return "early", nil
			}
			return Await[string](ctx.WaitForEvent("Signal"))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Reminder", nil))
	ack := s.mustTurn(fired(1, 3))
	if got := eventKinds(ack.HistoryDelta); got != "TimerFired,CancelRequested,ExternalSubscribed" {
		t.Fatalf("after the timer: %s", got)
	}
	s.mustTurn(raised("Signal", "go"))
	if s.status != provider.StatusCompleted || s.last.Metadata.Output != `"go"` {
		t.Fatalf("status %s output %s: the event went to the dead wait", s.status, s.last.Metadata.Output)
	}
	replayWhole(t, s)
}

// replayWhole replays the recorded history and checks it needs no new decision.
func replayWhole(t *testing.T, s *sim) {
	t.Helper()
	in := TurnInput{instance: s.instance, executionID: s.exec, history: s.history, now: s.now}
	ack, err := runTurn(s.reg, in, quiet)
	if err != nil || len(ack.HistoryDelta) != 0 {
		t.Fatalf("replay of the recorded history: delta %s, err %v", eventKinds(ack.HistoryDelta), err)
	}
}

// Item 8: losers are cancelled at once and deterministically: a losing timer
// is deleted from the queue, a losing activity removed.
func TestSelectCancelsLosers(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Race", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			if ctx.Select(ctx.CallActivity("Slow", nil), ctx.CreateTimer(time.Minute)) == 1 {
				return "timeout", nil
			}
			return Await[string](ctx.WaitForEvent("more"))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Race", nil))
	ack := s.mustTurn(done(1, 2, "x"))
	if len(ack.CancelledTimers) != 1 || ack.CancelledTimers[0].TimerID != 3 {
		t.Fatalf("timer not deleted when the activity won: %+v", ack.CancelledTimers)
	}
	if ev := ack.HistoryDelta[1]; ev.Kind != provider.EventCancelRequested || ev.SourceID != 3 {
		t.Fatalf("cancellation not recorded: %+v", ack.HistoryDelta)
	}
	s2 := newSim(t, reg)
	s2.mustTurn(start("Race", nil))
	ack = s2.mustTurn(fired(1, 3))
	if len(ack.CancelledActivities) != 1 || ack.CancelledActivities[0].ActivityID != 2 {
		t.Fatalf("activity not removed when the timer won: %+v", ack.CancelledActivities)
	}
	// A late completion of the cancelled activity is dropped, not recorded.
	ack = s2.mustTurn(done(1, 2, "late"))
	if len(ack.HistoryDelta) != 0 {
		t.Fatalf("late completion recorded: %s", eventKinds(ack.HistoryDelta))
	}
	replayWhole(t, s)
	replayWhole(t, s2)
}

// A retried activity whose attempt succeeds in time deletes its timeout timer
// instead of letting it fire and cost a turn.
func TestRetryTimeoutTimerDeletedOnSuccess(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "R", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			return Await[string](ctx.CallActivity("A", nil, WithRetry(RetryPolicy{MaxAttempts: 3, Timeout: time.Minute})))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("R", nil))
	ack := s.mustTurn(done(1, 2, "ok"))
	if s.status != provider.StatusCompleted || len(ack.CancelledTimers) != 1 {
		t.Fatalf("status %s cancelled timers %+v", s.status, ack.CancelledTimers)
	}
}

// Future.Cancel and ctx.Go scopes: cancelling a coroutine's future cancels
// what it waits for; it can clean up with WithoutCancel.
func TestCancelGoFutureCancelsItsScope(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Scoped", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			worker := ctx.Go(func(ctx *OrchestrationContext) (any, error) {
				_, err := Await[string](ctx.CallActivity("Long", nil))
				if errors.Is(err, ErrCanceled) {
					_, cerr := Await[string](ctx.WithoutCancel().CallActivity("Undo", nil))
					return "compensated", cerr
				}
				return "finished", err
			})
			_ = ctx.CreateTimer(time.Second).Await(nil)
			worker.Cancel()
			return Await[string](worker)
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Scoped", nil))
	ack := s.mustTurn(fired(1, 2))
	if len(ack.CancelledActivities) != 1 || len(ack.WorkerItems) != 1 || ack.WorkerItems[0].Name != "Undo" {
		t.Fatalf("cancelled %+v scheduled %+v", ack.CancelledActivities, ack.WorkerItems)
	}
	s.mustTurn(done(1, ack.WorkerItems[0].ID, "undone"))
	if s.last.Metadata.Output != `"compensated"` {
		t.Fatalf("output %s", s.last.Metadata.Output)
	}
	replayWhole(t, s)
}

// Item 2: continue-as-new carries events recorded but not consumed, and
// messages fetched after the execution ended, into the next execution.
func TestContinueAsNewCarriesUnconsumedMessages(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Loop", func(ctx *OrchestrationContext, gen int) (string, error) {
			if gen == 0 {
				_ = ctx.CreateTimer(time.Second).Await(nil)
				return "", ctx.ContinueAsNew(1)
			}
			a, err := Await[string](ctx.WaitForEvent("early"))
			if err != nil {
				return "", err
			}
			b, err := Await[string](ctx.WaitForEvent("late"))
			return a + "+" + b, err
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Loop", 0))
	// "early" is recorded before the timer and consumed by nobody; "late" is
	// fetched after the timer ended the execution.
	ack := s.mustTurn(raised("early", "e"), fired(1, 2), raised("late", "l"))
	next := canItem(t, ack)
	if len(next.Carry) != 2 || next.Carry[0].Name != "early" || next.Carry[1].Name != "late" {
		t.Fatalf("carried %+v", next.Carry)
	}
	s.mustTurn(next)
	if s.status != provider.StatusCompleted || s.last.Metadata.Output != `"e+l"` {
		t.Fatalf("execution 2: status %s output %s", s.status, s.last.Metadata.Output)
	}
}

// A cancellation fetched after a continue-as-new is carried too.
func TestContinueAsNewCarriesCancellation(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Loop", func(ctx *OrchestrationContext, gen int) (string, error) {
			if err := ctx.CreateTimer(time.Second).Await(nil); err != nil {
				return "", err
			}
			return "", ctx.ContinueAsNew(gen + 1)
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Loop", 0))
	ack := s.mustTurn(fired(1, 2), provider.WorkItem{Kind: provider.WorkCancelRequested, Instance: "inst", Reason: "stop"})
	s.mustTurn(canItem(t, ack))
	if f := DecodeFailure(s.last.Metadata.Output); s.status != provider.StatusFailed || f.Kind != FailureCanceled || f.Reason != "orchestration cancelled: stop" {
		t.Fatalf("execution 2: status %s failure %+v, want Failed (cancelled)", s.status, f)
	}
}

// Past MaxCarryForwardEvents the orchestration fails clearly.
func TestContinueAsNewCarryLimitFails(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Loop", func(ctx *OrchestrationContext, gen int) (string, error) {
			_ = ctx.CreateTimer(time.Second).Await(nil)
			return "", ctx.ContinueAsNew(gen + 1)
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Loop", 0))
	var msgs []provider.WorkItem
	for range MaxCarryForwardEvents + 1 {
		msgs = append(msgs, raised("ignored", 1))
	}
	s.mustTurn(append(msgs, fired(1, 2))...)
	f := DecodeFailure(s.last.Metadata.Output)
	if s.status != provider.StatusFailed || f.Kind != FailureLimit || !strings.Contains(f.Message, "carry-forward") {
		t.Fatalf("status %s failure %+v", s.status, f)
	}
}

// Item 9: ctx.Now is the same on the first run and on replay.
func TestNowIsTheSameOnReplay(t *testing.T) {
	var seen []time.Time
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Clock", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			seen = append(seen, ctx.Now())
			return Await[string](ctx.WaitForEvent("go"))
		})
	})
	s := newSim(t, reg)
	s.now = s.now.Add(123456789 * time.Nanosecond)
	s.mustTurn(start("Clock", nil))
	s.mustTurn(raised("other", nil))
	if len(seen) != 2 || !seen[0].Equal(seen[1]) || seen[0].String() != seen[1].String() {
		t.Fatalf("first run %v, replay %v", seen[0], seen[len(seen)-1])
	}
}

// Item 10: a Terminate queued before the first turn wins over code that
// would complete in that turn.
func TestTerminateBeforeFirstTurnWins(t *testing.T) {
	ran := false
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Quick", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			ran = true
			return "done", nil
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Quick", nil), provider.WorkItem{Kind: provider.WorkCancelInstance, Instance: "inst", Reason: "changed my mind"})
	if s.status != provider.StatusTerminated || ran {
		t.Fatalf("status %s (code ran: %v), want Terminated without running", s.status, ran)
	}
	if got := eventKinds(s.history); got != "OrchestrationStarted,OrchestrationTerminated" {
		t.Fatalf("history %s", got)
	}
}

// Terminate needs no replay: it works on code that is nondeterministic now,
// and cancels what the history says is outstanding.
func TestTerminateWithoutReplay(t *testing.T) {
	changed := false
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Drift", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			name := "A"
			if changed {
				name = "B"
			}
			return Await[string](ctx.CallActivity(name, nil))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Drift", nil))
	changed = true
	if _, err := s.turn(raised("x", nil)); err == nil {
		t.Fatal("expected nondeterminism")
	}
	ack := s.mustTurn(provider.WorkItem{Kind: provider.WorkCancelInstance, Instance: "inst", Reason: "bad deploy"})
	if s.status != provider.StatusTerminated || len(ack.CancelledActivities) != 1 {
		t.Fatalf("status %s cancelled %+v", s.status, ack.CancelledActivities)
	}
}

// Item 7: a sub-orchestration start naming an existing instance is refused to
// its parent; a repeated delivery of the instance's own start is ignored.
func TestSubOrchestrationStartOfExistingInstanceIsRefused(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Child", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			return Await[string](ctx.WaitForEvent("go"))
		})
	})
	own := start("Child", nil)
	own.ParentInstance, own.ParentExecutionID, own.ParentID = "p1", 1, 2
	other := own
	other.ParentInstance = "p2"
	for _, c := range []struct {
		name     string
		finished bool
	}{{"running", false}, {"finished", true}} {
		t.Run(c.name, func(t *testing.T) {
			s := newSim(t, reg)
			s.mustTurn(own)
			if c.finished {
				s.mustTurn(raised("go", "x"))
			}
			item := &provider.OrchestrationItem{Instance: "inst", Exists: true, ExecutionID: 1, Status: s.status,
				History: s.history, Messages: []provider.WorkItem{own, other}}
			in, v := PrepareTurn(item, s.now)
			ack := provider.OrchestrationAck{OrchestratorItems: in.Replies}
			if v == RunIt {
				var err error
				if ack, err = runTurn(reg, in, quiet); err != nil {
					t.Fatal(err)
				}
			}
			if len(ack.OrchestratorItems) != 1 {
				t.Fatalf("replies %+v, want one refusal (to p2 only)", ack.OrchestratorItems)
			}
			r := ack.OrchestratorItems[0]
			if r.Kind != provider.WorkSubOrchFailed || r.Instance != "p2" || r.Error.Kind != FailureAlreadyExists ||
				!strings.Contains(r.Error.Message, `instance "inst" already exists`) {
				t.Fatalf("reply %+v %+v", r, r.Error)
			}
		})
	}
}

// Item 6: a user's recover cannot stop teardown, and a deferred await (a
// saga compensation) does not park a goroutine forever.
func TestTeardownIgnoresUserRecover(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Saga", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			defer func() {
				_ = recover()
				_ = ctx.CallActivity("Compensate", nil).Await(nil)
			}()
			return Await[string](ctx.WaitForEvent("never"))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Saga", nil))
	before := countGoroutines()
	for range 200 {
		s.mustTurn(raised("other", nil))
	}
	deadline := time.Now().Add(5 * time.Second)
	for countGoroutines() > before+5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := countGoroutines(); n > before+5 {
		t.Fatalf("%d goroutines after 200 turns, %d before: coroutines leak", n, before)
	}
}

// Item 4: code that blocks outside the engine fails the turn at the step
// deadline with an error naming the instance and where it blocked.
func TestBlockedCodeHitsTheStepDeadline(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Stuck", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			<-block
			return "", nil
		})
	})
	in := TurnInput{instance: "stuck-1", executionID: 1, start: &provider.WorkItem{Kind: provider.WorkStartOrchestration,
		Instance: "stuck-1", Name: "Stuck", ExecutionID: 1}, now: time.Now(), StepTimeout: 100 * time.Millisecond}
	_, err := runTurn(reg, in, quiet)
	var be *BlockedError
	if !errors.As(err, &be) || be.Instance != "stuck-1" || !strings.Contains(be.Stack, "TestBlockedCodeHitsTheStepDeadline") {
		t.Fatalf("err = %v", err)
	}
	if d := DetailsOf(err); d.Class != ErrorConfiguration || d.Kind != FailureBlocked {
		t.Fatalf("details %+v", d)
	}
}

// Limits: an oversized custom status fails the orchestration before the ack.
func TestCustomStatusLimit(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Big", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			ctx.SetCustomStatus(strings.Repeat("x", MaxCustomStatusBytes))
			return Await[string](ctx.WaitForEvent("never"))
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Big", nil))
	f := DecodeFailure(s.last.Metadata.Output)
	if s.status != provider.StatusFailed || f.Kind != FailureLimit || s.last.Metadata.CustomStatus != nil && len(s.last.Metadata.CustomStatus.Value) > MaxCustomStatusBytes {
		t.Fatalf("status %s failure %+v", s.status, f)
	}
}

// Custom status read-back is deterministic, and set+clear in one turn bumps
// the version (an update is written).
func TestCustomStatusReadBack(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Counter", func(ctx *OrchestrationContext, _ struct{}) (int, error) {
			var n int
			if _, err := ctx.CustomStatus(&n); err != nil {
				return 0, err
			}
			ctx.SetCustomStatus(n + 1)
			if n+1 < 3 {
				_ = ctx.CreateTimer(time.Second).Await(nil)
				return 0, ctx.ContinueAsNew(nil)
			}
			ctx.SetCustomStatus("tmp")
			ctx.ClearCustomStatus()
			return n + 1, nil
		})
	})
	s := newSim(t, reg)
	ack := s.mustTurn(start("Counter", nil))
	for range 2 {
		ack = s.mustTurn(fired(s.exec, 2))
		ack = s.mustTurn(canItem(t, ack))
	}
	if s.status != provider.StatusCompleted || ack.Metadata.Output != "3" {
		t.Fatalf("status %s output %s", s.status, ack.Metadata.Output)
	}
	if cs := ack.Metadata.CustomStatus; cs == nil || !cs.Clear {
		t.Fatalf("set then clear in one turn wrote %+v, want a clear", cs)
	}
}

// Work scheduled and cancelled in the same turn is never queued: no worker
// item or timer for the provider to delete again, no activity to skip.
func TestWorkCancelledInItsOwnTurnIsNotQueued(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Fickle", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			a, tm := ctx.CallActivity("Kept", nil), ctx.CreateTimer(time.Hour)
			ctx.CallActivity("Dropped", nil).Cancel()
			ctx.CreateTimer(time.Minute).Cancel()
			_ = tm
			return Await[string](a)
		})
	})
	s := newSim(t, reg)
	ack := s.mustTurn(start("Fickle", nil))
	if len(ack.WorkerItems) != 1 || ack.WorkerItems[0].Name != "Kept" || len(ack.CancelledActivities) != 0 {
		t.Fatalf("worker items %+v, cancelled %+v; want only Kept and no cancellation", ack.WorkerItems, ack.CancelledActivities)
	}
	if len(ack.OrchestratorItems) != 1 || ack.OrchestratorItems[0].FireAt != s.now.Add(time.Hour).UnixMilli() || len(ack.CancelledTimers) != 0 {
		t.Fatalf("timers %+v, cancelled %+v; want only the hour timer", ack.OrchestratorItems, ack.CancelledTimers)
	}
	if got := eventKinds(ack.HistoryDelta); !strings.Contains(got, "CancelRequested,TimerCreated,CancelRequested") {
		t.Fatalf("history %s: the cancellations must still be recorded", got)
	}
	// The forgotten hour timer is cancelled when the orchestration completes.
	ack = s.mustTurn(done(s.exec, ack.WorkerItems[0].ID, "ok"))
	if len(ack.CancelledTimers) != 1 || s.status != provider.StatusCompleted {
		t.Fatalf("completion: cancelled timers %+v status %s", ack.CancelledTimers, s.status)
	}
	replayWhole(t, s)
}

// A wait that had its event already but lost a Select gives the event back:
// only code that reads an event consumes it (found by the randomized test).
func TestSelectLoserGivesBackAnEventItNeverRead(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Both", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			if _, err := Await[string](ctx.CallActivity("Gate", nil)); err != nil {
				return "", err
			}
			a, b := ctx.WaitForEvent("A"), ctx.WaitForEvent("B") // both already arrived
			first, _ := Await[string]([]*Future{a, b}[ctx.Select(a, b)])
			second, err := Await[string](ctx.WaitForEvent("B"))
			return first + "," + second, err
		})
	})
	s := newSim(t, reg)
	ack := s.mustTurn(start("Both", nil))
	ack = s.mustTurn(raised("A", "a1"), raised("B", "b1"), done(s.exec, ack.WorkerItems[0].ID, "go"))
	if s.status != provider.StatusCompleted || ack.Metadata.Output != `"a1,b1"` {
		t.Fatalf("status %s output %s: the losing wait kept b1", s.status, ack.Metadata.Output)
	}
	replayWhole(t, s)
}

// Events carried over a continue-as-new are recorded in the new execution
// even when its code finishes without waiting for them (found by the
// randomized test: they were dropped unrecorded).
func TestCarriedEventsAreRecordedBeforeTheCodeRuns(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Twice", func(ctx *OrchestrationContext, n int) (int, error) {
			if n == 0 {
				_ = ctx.CreateTimer(time.Second).Await(nil)
				return 0, ctx.ContinueAsNew(1)
			}
			return n, nil
		})
	})
	s := newSim(t, reg)
	ack := s.mustTurn(start("Twice", 0))
	ack = s.mustTurn(fired(s.exec, ack.OrchestratorItems[0].ID), raised("late", "x"))
	ack = s.mustTurn(canItem(t, ack))
	if s.status != provider.StatusCompleted || eventKinds(ack.HistoryDelta) != "OrchestrationStarted,ExternalRaised,OrchestrationCompleted" ||
		!ack.HistoryDelta[1].Carried || ack.HistoryDelta[1].Input != `"x"` {
		t.Fatalf("status %s, second execution's history %s", s.status, describeEvents(ack.HistoryDelta))
	}
	replayWhole(t, s)
}
