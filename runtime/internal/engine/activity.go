package engine

import (
	"context"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
)

// CallActivity runs fn on the item's input; a panic becomes its error, and
// a result over the payload limit fails it.
func CallActivity(ctx context.Context, fn ActivityFunc, item provider.WorkItem) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("activity panicked: %v", p)
		}
	}()
	out, err = fn(ctx, item.Input)
	if err == nil && len(out) > MaxPayloadBytes {
		return "", &LimitError{What: "payload", Size: len(out), Limit: MaxPayloadBytes, Hint: "activity " + item.Name + " result"}
	}
	return out, err
}

// ActivityFailed is the completion of an activity attempt that failed with d.
func ActivityFailed(item provider.WorkItem, d *provider.ErrorDetails) *provider.WorkItem {
	return &provider.WorkItem{Kind: provider.WorkActivityFailed, Instance: item.Instance, ExecutionID: item.ExecutionID, ID: item.ID, Error: d}
}
