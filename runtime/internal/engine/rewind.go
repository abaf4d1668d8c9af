package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/duroxide/duroxide-go/provider"
)

// ErrNotFailed: only an execution that failed can be rewound.
var ErrNotFailed = errors.New("the execution did not fail")

// RewindPoint is how many of a failed execution's events a rewind keeps,
// and the failing step it re-runs ("" when the code itself failed):
//   - the cut starts before the last failed activity or sub-orchestration,
//     back to the first attempt of its retries, or else before the end;
//   - it moves further back past any activity, timer or child it keeps
//     whose answer it would drop, so that nothing the new execution waits
//     for is lost (events and cancellations received after the cut are
//     carried: RewindCarry);
//   - it never drops the start: at worst the execution runs again from
//     its input (toStart asks for that).
func RewindPoint(events []provider.Event, toStart bool) (keep int, step string, err error) {
	if len(events) < 2 || events[0].Kind != provider.EventOrchestrationStarted {
		return 0, "", fmt.Errorf("%w: its history has no start", ErrNotFailed)
	}
	end := len(events) - 1
	if events[end].Kind != provider.EventOrchestrationFailed {
		return 0, "", fmt.Errorf("%w: its history ends with %s", ErrNotFailed, events[end].Kind)
	}
	start := 1
	for start < end && events[start].Carried {
		start++
	}
	if toStart {
		return start, "", nil
	}
	cut := end
	for cut > start && events[cut-1].Kind == provider.EventCancelRequested {
		cut-- // the end's own cancellations of what was left open
	}
	byID := indexByID(events)
	if f := lastFailedStep(events[:cut]); f >= 0 {
		s := byID[events[f].SourceID]
		step = events[s].Name
		cut = min(cut, firstAttempt(events, byID, s))
	}
	for {
		open := firstOpenDecision(events[:cut])
		if open < 0 {
			break
		}
		cut = open
	}
	return max(cut, start), step, nil
}

func indexByID(events []provider.Event) map[int64]int {
	byID := make(map[int64]int, len(events))
	for i, e := range events {
		byID[e.ID] = i
	}
	return byID
}

// lastFailedStep is the index of the last failed activity or child, -1 when none failed.
func lastFailedStep(events []provider.Event) int {
	for i := len(events) - 1; i >= 0; i-- {
		if k := events[i].Kind; k == provider.EventActivityFailed || k == provider.EventSubOrchestrationFailed {
			return i
		}
	}
	return -1
}

// firstAttempt follows a retried activity back from the attempt scheduled
// at s, over the backoff timers between its attempts, to its first attempt.
func firstAttempt(events []provider.Event, byID map[int64]int, s int) int {
	name := events[s].Name
	backoff := TimerRetryBackoff + " " + name + " after attempt "
	for {
		b := s - 1
		for b >= 0 && (events[b].Kind != provider.EventTimerCreated || !strings.HasPrefix(events[b].Reason, backoff)) {
			b--
		}
		f := b - 1
		for f >= 0 && (events[f].Kind != provider.EventActivityFailed || events[byID[events[f].SourceID]].Name != name) {
			f--
		}
		if b < 0 || f < 0 {
			return s
		}
		s = byID[events[f].SourceID]
	}
}

// firstOpenDecision is the index of the first activity, timer or child in
// events that no later event in them answers (a completion or a
// cancellation), -1 when every one is answered.
func firstOpenDecision(events []provider.Event) int {
	answered := map[int64]bool{}
	for _, e := range events {
		if e.SourceID != 0 {
			answered[e.SourceID] = true
		}
	}
	for i, e := range events {
		switch e.Kind {
		case provider.EventActivityScheduled, provider.EventTimerCreated, provider.EventSubOrchestrationScheduled:
			if !answered[e.ID] {
				return i
			}
		}
	}
	return -1
}

// RewindCarry is what the events a rewind drops had received from outside
// (raised events, cancellation requests), as messages the new execution
// receives after the kept ones, in order.
func RewindCarry(dropped []provider.Event) []provider.WorkItem {
	var carry []provider.WorkItem
	for _, e := range dropped {
		switch e.Kind {
		case provider.EventExternalRaised:
			carry = append(carry, provider.WorkItem{Kind: provider.WorkExternalRaised, Name: e.Name, Input: e.Input, Key: e.Key})
		case provider.EventOrchestrationCancelRequested:
			carry = append(carry, provider.WorkItem{Kind: provider.WorkCancelRequested, Reason: e.Reason})
		}
	}
	return carry
}
