package engine

import (
	"errors"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// history builds events with IDs in order from kinds and fields.
func history(events ...provider.Event) []provider.Event {
	for i := range events {
		events[i].ID = int64(i + 1)
	}
	return events
}

func TestRewindPoint(t *testing.T) {
	started := provider.Event{Kind: provider.EventOrchestrationStarted, Name: "O"}
	failedEnd := provider.Event{Kind: provider.EventOrchestrationFailed}
	sched := func(name string) provider.Event {
		return provider.Event{Kind: provider.EventActivityScheduled, Name: name}
	}
	answer := func(kind provider.EventKind, source int64) provider.Event {
		return provider.Event{Kind: kind, SourceID: source}
	}
	backoff := func(name, attempt string) provider.Event {
		return provider.Event{Kind: provider.EventTimerCreated, Reason: TimerRetryBackoff + " " + name + " after attempt " + attempt}
	}
	for _, tc := range []struct {
		name    string
		events  []provider.Event
		toStart bool
		keep    int
		step    string
	}{
		{"before the failed activity", history(started, sched("A"), answer(provider.EventActivityCompleted, 2),
			sched("B"), answer(provider.EventActivityFailed, 4), failedEnd), false, 3, "B"},
		{"back to the first attempt of a retried activity", history(started, sched("A"), answer(provider.EventActivityCompleted, 2),
			sched("B"), answer(provider.EventActivityFailed, 4), backoff("B", "1"), answer(provider.EventTimerFired, 6),
			sched("B"), answer(provider.EventActivityFailed, 8), failedEnd), false, 3, "B"},
		{"past an activity still open at the cut", history(started, sched("Slow"), sched("B"),
			answer(provider.EventActivityFailed, 3), answer(provider.EventActivityCompleted, 2), failedEnd), false, 1, "B"},
		{"past the end's cancellations when the code failed", history(started, sched("A"), answer(provider.EventActivityCompleted, 2),
			provider.Event{Kind: provider.EventTimerCreated}, answer(provider.EventCancelRequested, 4), failedEnd), false, 3, ""},
		{"an open event wait is kept (its events are carried)", history(started, provider.Event{Kind: provider.EventExternalSubscribed, Name: "go"},
			sched("B"), answer(provider.EventActivityFailed, 3), failedEnd), false, 2, "B"},
		{"carried events stay with the start", history(started, provider.Event{Kind: provider.EventExternalRaised, Name: "go", Carried: true},
			sched("B"), answer(provider.EventActivityFailed, 3), failedEnd), true, 2, ""},
	} {
		keep, step, err := RewindPoint(tc.events, tc.toStart)
		if err != nil || keep != tc.keep || step != tc.step {
			t.Errorf("%s: keep %d, step %q, %v; want %d, %q", tc.name, keep, step, err, tc.keep, tc.step)
		}
	}
	if _, _, err := RewindPoint(history(started, provider.Event{Kind: provider.EventOrchestrationCompleted}), false); !errors.Is(err, ErrNotFailed) {
		t.Errorf("rewind point of a completed execution: %v, want ErrNotFailed", err)
	}
}

func TestRewindCarry(t *testing.T) {
	dropped := history(provider.Event{Kind: provider.EventActivityScheduled, Name: "B"},
		provider.Event{Kind: provider.EventExternalRaised, Name: "go", Input: `1`, Key: "k"},
		provider.Event{Kind: provider.EventOrchestrationCancelRequested, Reason: "stop"},
		provider.Event{Kind: provider.EventOrchestrationFailed})
	carry := RewindCarry(dropped)
	if len(carry) != 2 || carry[0].Kind != provider.WorkExternalRaised || carry[0].Key != "k" || carry[0].Input != "1" ||
		carry[1].Kind != provider.WorkCancelRequested || carry[1].Reason != "stop" {
		t.Errorf("carry %+v, want the raised event then the cancellation", carry)
	}
}
