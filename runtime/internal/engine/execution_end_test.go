package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// leaveWorkBehind schedules work of every kind, then returns once "Fast"
// answers, leaving the rest outstanding.
func leaveWorkBehind(ctx *OrchestrationContext, _ struct{}) (string, error) {
	ctx.CallActivity("Slow", nil)
	ctx.CreateTimer(time.Hour)
	ctx.WaitForEvent("never")
	ctx.CallSubOrchestration("Child", nil)
	return Await[string](ctx.CallActivity("Fast", nil))
}

func leaveWorkBehindRegistry(t *testing.T) *Registry {
	return registry(t, func(r *Registry) { RegisterOrchestration(r, "Leave", leaveWorkBehind) })
}

// cancelledSources lists the decisions the delta records as cancelled.
func cancelledSources(delta []provider.Event) []int64 {
	var out []int64
	for _, ev := range delta {
		if ev.Kind == provider.EventCancelRequested {
			out = append(out, ev.SourceID)
		}
	}
	return out
}

// Work an execution drops when it ends is recorded as cancelled, as a Select
// loser is, and the history replays without a mismatch.
func TestExecutionEndRecordsCancelledWork(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  provider.WorkItem
		last provider.EventKind
	}{
		{"completed", done(1, 6, "fast"), provider.EventOrchestrationCompleted},
		{"terminated", provider.WorkItem{Kind: provider.WorkCancelInstance, Instance: "inst", Reason: "stop"}, provider.EventOrchestrationTerminated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := leaveWorkBehindRegistry(t)
			s := newSim(t, reg)
			s.mustTurn(start("Leave", nil))
			ack := s.mustTurn(tc.end)
			// Events 2-6: Slow, the timer, the wait, the child, Fast.
			want := []int64{2, 3, 4, 5}
			if tc.last == provider.EventOrchestrationTerminated {
				want = []int64{2, 3, 5, 6} // terminating reads the history only: it knows no waits
			}
			if got := cancelledSources(ack.HistoryDelta); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("cancellations recorded at the end: %v (delta %s), want %v", got, eventKinds(ack.HistoryDelta), want)
			}
			if last := ack.HistoryDelta[len(ack.HistoryDelta)-1].Kind; last != tc.last {
				t.Fatalf("last event %s, want %s", last, tc.last)
			}
			if err := Replay(reg, s.history, ReplayInstance("inst")); err != nil {
				t.Fatalf("replay of the ended history: %v", err)
			}
		})
	}
}

// A cancellation the execution's end recorded that names no outstanding
// decision is a mismatch.
func TestReplayRefusesAnEndCancellationOfNothing(t *testing.T) {
	reg := leaveWorkBehindRegistry(t)
	s := newSim(t, reg)
	s.mustTurn(start("Leave", nil))
	s.mustTurn(done(1, 6, "fast"))
	h := append([]provider.Event(nil), s.history...)
	for i := range h {
		if h[i].Kind == provider.EventCancelRequested && h[i].SourceID == 2 {
			h[i].SourceID = 6 // Fast: answered, not outstanding
		}
	}
	var nd *NondeterminismError
	if err := Replay(reg, h, ReplayInstance("inst")); !errors.As(err, &nd) {
		t.Fatalf("replay with a cancellation of answered work: %v, want a NondeterminismError", err)
	}
}

// A turn that would take the history past MaxHistoryEvents stores none of
// its events: the execution fails from the history it had, its outstanding
// work cancelled, and nothing the turn scheduled is queued.
func TestHistoryLimitStoresNothingOfTheTurn(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Flood", func(ctx *OrchestrationContext, _ struct{}) (int, error) {
			ctx.CreateTimer(time.Hour)
			if _, err := Await[string](ctx.CallActivity("Go", nil)); err != nil {
				return 0, err
			}
			for range MaxHistoryEvents {
				ctx.CallActivity("Spam", nil)
			}
			return 0, ctx.WaitForEvent("never").Await(nil)
		})
	})
	s := newSim(t, reg)
	s.mustTurn(start("Flood", nil)) // 1 started, 2 timer, 3 Go
	ack := s.mustTurn(done(1, 3, "go"))
	if got := eventKinds(ack.HistoryDelta); got != "CancelRequested,CancelRequested,OrchestrationFailed" {
		t.Fatalf("delta of the over-limit turn: %d events (%.200s), want the cancellation of the timer and Go, then the failure",
			len(ack.HistoryDelta), got)
	}
	if len(ack.WorkerItems) != 0 {
		t.Fatalf("the over-limit turn queues %d activities, want none", len(ack.WorkerItems))
	}
	if len(ack.CancelledTimers) != 1 || ack.CancelledTimers[0].TimerID != 2 {
		t.Fatalf("cancelled timers %v, want timer 2", ack.CancelledTimers)
	}
	failure := ack.HistoryDelta[2].Error
	if s.status != provider.StatusFailed || failure == nil || failure.Kind != FailureLimit || !strings.Contains(failure.Message, "history limit exceeded") {
		t.Fatalf("status %s, failure %+v; want Failed with the history limit", s.status, failure)
	}
	if n := len(s.history); n != 6 {
		t.Fatalf("stored history %d events, want 6", n)
	}
}

// A first turn past the limit stores the start and the failure only.
func TestHistoryLimitOnTheFirstTurn(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Flood", func(ctx *OrchestrationContext, _ struct{}) (int, error) {
			for range MaxHistoryEvents {
				ctx.CallActivity("Spam", nil)
			}
			return 0, ctx.WaitForEvent("never").Await(nil)
		})
	})
	s := newSim(t, reg)
	ack := s.mustTurn(start("Flood", nil))
	if got := eventKinds(ack.HistoryDelta); got != "OrchestrationStarted,OrchestrationFailed" || len(ack.WorkerItems) != 0 {
		t.Fatalf("first turn past the limit: %d events, %d activities queued; want OrchestrationStarted,OrchestrationFailed and none",
			len(ack.HistoryDelta), len(ack.WorkerItems))
	}
	if ack.Metadata.OrchestrationName != "Flood" || s.status != provider.StatusFailed {
		t.Fatalf("metadata %+v, status %s; want the instance named and Failed", ack.Metadata, s.status)
	}
}
