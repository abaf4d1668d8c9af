package runtime

import (
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// prepareTurn decides which execution a fetched item's messages are for and
// drops those that no longer apply. ok is false when nothing is left to run;
// the item is then acked empty, which deletes its messages.
func prepareTurn(item *provider.OrchestrationItem, now time.Time) (in turnInput, ok bool) {
	in = turnInput{instance: item.Instance, customStatus: item.CustomStatus, now: now}
	switch {
	case !item.Exists:
		in.start = firstOfKind(item.Messages, provider.WorkStartOrchestration)
		if in.start == nil {
			return in, false // messages for an instance that was never started, or was deleted
		}
		in.executionID = 1
	case item.Status == provider.StatusContinuedAsNew:
		in.start = firstOfKind(item.Messages, provider.WorkContinueAsNew)
		if in.start == nil {
			return in, false
		}
		in.executionID = item.ExecutionID + 1
	case item.Status.Terminal():
		return in, false // finished: late completions, events and starts are dropped
	default:
		in.executionID = item.ExecutionID
		in.history = item.History
	}
	for _, m := range item.Messages {
		if _, _, completion := completionKind(m.Kind); completion && m.ExecutionID != in.executionID {
			continue // answers a decision of an earlier execution
		}
		in.messages = append(in.messages, m)
	}
	return in, true
}

func firstOfKind(items []provider.WorkItem, kind provider.WorkItemKind) *provider.WorkItem {
	for i := range items {
		if items[i].Kind == kind {
			return &items[i]
		}
	}
	return nil
}
