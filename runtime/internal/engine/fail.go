package engine

import (
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// FailedAck is the ack that ends item's execution as Failed with d, without
// running its code: the code is missing, nondeterministic or its stored
// state unreadable. in is nil when the item was not prepared.
func FailedAck(item *provider.OrchestrationItem, in *TurnInput, d *provider.ErrorDetails) provider.OrchestrationAck {
	ack := provider.OrchestrationAck{ExecutionID: item.ExecutionID,
		Metadata: provider.ExecutionMetadata{Status: provider.StatusFailed, Output: EncodeFailure(d)}}
	var parent parentRef
	switch {
	case in == nil || item.DecodeError != nil:
		// The stored history cannot be trusted for event IDs: record the status only.
		if !item.Exists {
			return provider.OrchestrationAck{ExecutionID: item.ExecutionID}
		}
	case len(in.history) == 0:
		ack.ExecutionID = in.executionID
		ack.Metadata.OrchestrationName, ack.Metadata.OrchestrationVersion = in.start.Name, in.start.Version
		ack.Metadata.ParentInstance = in.start.ParentInstance
		parent = parentRef{in.start.ParentInstance, in.start.ParentExecutionID, in.start.ParentID}
		ack.HistoryDelta = []provider.Event{
			{ID: 1, Kind: provider.EventOrchestrationStarted, Time: time.Now().UnixMilli(), Name: in.start.Name,
				Version: in.start.Version, Input: in.start.Input, ParentInstance: parent.instance,
				ParentExecutionID: parent.executionID, ParentID: parent.id, ExecutionID: in.executionID, Owner: in.start.Owner},
			{ID: 2, Kind: provider.EventOrchestrationFailed, Time: time.Now().UnixMilli(), Error: d},
		}
	default:
		started := in.history[0]
		parent = parentRef{started.ParentInstance, started.ParentExecutionID, started.ParentID}
		ack.HistoryDelta = []provider.Event{{ID: int64(len(in.history)) + 1, Kind: provider.EventOrchestrationFailed,
			Time: time.Now().UnixMilli(), Error: d}}
	}
	if in != nil {
		ack.OrchestratorItems = in.Replies
	}
	if parent.instance != "" {
		ack.OrchestratorItems = append(ack.OrchestratorItems, provider.WorkItem{Kind: provider.WorkSubOrchFailed, Instance: parent.instance,
			ExecutionID: parent.executionID, ID: parent.id, Error: d})
	}
	return ack
}
