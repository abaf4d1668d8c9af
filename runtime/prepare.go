package runtime

import (
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// prepareTurn decides which execution a fetched item's messages are for and
// drops those that no longer apply. ok is false when nothing is left to run;
// the item is then acked with only in.replies, which deletes its messages.
func prepareTurn(item *provider.OrchestrationItem, now time.Time) (in turnInput, ok bool) {
	// Whole milliseconds, as history stores time, so ctx.Now is the same
	// value on the first run and on every replay.
	in = turnInput{instance: item.Instance, customStatus: item.CustomStatus, now: time.UnixMilli(now.UnixMilli())}
	var own *provider.WorkItem
	switch {
	case !item.Exists:
		own = firstOfKind(item.Messages, provider.WorkStartOrchestration)
		if own == nil {
			return in, false // messages for an instance that was never started, or was deleted
		}
		in.executionID = 1
	case item.Status == provider.StatusContinuedAsNew:
		own = firstOfKind(item.Messages, provider.WorkContinueAsNew)
		if own == nil {
			return in, false
		}
		in.executionID = item.ExecutionID + 1
	case item.Status.Terminal():
		// Finished: late completions and events are dropped; a sub-orchestration
		// start naming this instance is refused to its parent.
		in.replies = refusals(item)
		return in, false
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
	return in, true
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

func firstOfKind(items []provider.WorkItem, kind provider.WorkItemKind) *provider.WorkItem {
	for i := range items {
		if items[i].Kind == kind {
			return &items[i]
		}
	}
	return nil
}
