package engine

import (
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
		if &item.Messages[i] == own {
			continue
		}
		if _, _, completion := completionKind(m.Kind); completion && m.ExecutionID != in.executionID {
			continue // answers a decision of an earlier execution
		}
		in.messages = append(in.messages, m)
	}
	return in, RunIt
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
