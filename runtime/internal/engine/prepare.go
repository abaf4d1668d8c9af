package engine

import (
	"slices"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Verdict is what PrepareTurn decided to do with a fetched item.
type Verdict int

const (
	// RunIt: run the turn.
	RunIt Verdict = iota
	// DropIt: nothing will ever read the messages; ack the item with only
	// in.Replies, which deletes them.
	DropIt
	// HandBack: the messages are for a turn the item lacks the message of
	// (another transaction held it when the store tagged the item); abandon
	// the item, keeping its messages for the next fetch.
	HandBack
)

// PrepareTurn decides which execution a fetched item's messages are for and
// drops those that no longer apply.
func PrepareTurn(item *provider.OrchestrationItem, now time.Time) (in TurnInput, v Verdict) {
	// Whole milliseconds, as history stores time, so ctx.Now is the same
	// value on the first run and on every replay.
	in = TurnInput{instance: item.Instance, customStatus: item.CustomStatus, now: time.UnixMilli(now.UnixMilli())}
	var own *provider.WorkItem
	rewind := rewindOf(item)
	switch {
	case !item.Exists:
		own = FirstOfKind(item.Messages, provider.WorkStartOrchestration)
		if own == nil {
			return in, DropIt // messages for an instance that was never started, or was deleted
		}
		in.executionID = 1
	case item.Status == provider.StatusContinuedAsNew:
		// The commit that ended the execution queued its ContinueAsNew
		// message, so the store still holds it: events sent after the
		// commit wait for the next execution with it.
		own = FirstOfKind(item.Messages, provider.WorkContinueAsNew)
		if own == nil {
			return in, HandBack
		}
		in.executionID = item.ExecutionID + 1
	case rewind != nil:
		// A failed instance rewound (Client.Rewind): the store opened the
		// new execution; it starts from the failed one's events its
		// message carries.
		own = rewind
		in.executionID, in.rewoundFrom = own.ExecutionID, own.ExecutionID-1
		in.history = rewoundHistory(own.History, own.ExecutionID)
		for _, m := range own.Carry {
			m.Instance, m.ExecutionID = item.Instance, own.ExecutionID
			in.messages = append(in.messages, m)
		}
	case item.Status.Terminal():
		// Finished: late completions and events are dropped; a sub-orchestration
		// start naming this instance is refused to its parent.
		in.Replies = refusals(item)
		return in, DropIt
	default:
		in.executionID = item.ExecutionID
		in.history = item.History
	}
	in.start = own
	if own != nil {
		// Carried events and cancellations are received before the code
		// starts (startExecution); a carried Terminate is applied like any.
		for _, m := range own.Carry {
			if m.Kind == provider.WorkCancelInstance {
				in.messages = append(in.messages, m)
			}
		}
	}
	for i := range item.Messages {
		m := item.Messages[i]
		if &item.Messages[i] == own || m.Kind == provider.WorkRewind {
			continue // a rewind not for this turn's execution is stale
		}
		if _, _, completion := completionKind(m.Kind); completion && m.ExecutionID != in.executionID {
			continue // answers a decision of an earlier execution
		}
		in.messages = append(in.messages, m)
	}
	return in, RunIt
}

// rewindOf is the batch's rewind of the current execution, if any: the
// store opened that execution when it queued the rewind, so it has no
// history yet.
func rewindOf(item *provider.OrchestrationItem) *provider.WorkItem {
	if !item.Exists || item.Status != provider.StatusRunning || len(item.History) > 0 {
		return nil
	}
	for i := range item.Messages {
		if m := &item.Messages[i]; m.Kind == provider.WorkRewind && m.ExecutionID == item.ExecutionID && len(m.History) > 0 {
			return m
		}
	}
	return nil
}

// rewoundHistory is a rewind's events as the new execution's: its start
// names the new execution.
func rewoundHistory(events []provider.Event, execution int64) []provider.Event {
	out := slices.Clone(events)
	out[0].ExecutionID, out[0].RewoundFrom = execution, execution-1
	return out
}

// refusals answers the sub-orchestration starts queued for a finished instance.
func refusals(item *provider.OrchestrationItem) []provider.WorkItem {
	var own parentRef
	if len(item.History) > 0 {
		s := item.History[0]
		own = parentRef{s.ParentInstance, s.ParentExecutionID, s.ParentID}
	}
	var out []provider.WorkItem
	for _, m := range item.Messages {
		if r := refusal(m, item.Instance, own); r != nil {
			out = append(out, *r)
		}
	}
	return out
}

// FirstOfKind is the first of items of kind, or nil.
func FirstOfKind(items []provider.WorkItem, kind provider.WorkItemKind) *provider.WorkItem {
	for i := range items {
		if items[i].Kind == kind {
			return &items[i]
		}
	}
	return nil
}
