package sqlite

import (
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func invalid(op, instance, format string, args ...any) error {
	return provider.Permanent(op, instance, fmt.Errorf("%w: "+format, append([]any{provider.ErrInvalidArgument}, args...)...))
}

func lockNotHeld(op, instance, detail string) error {
	return provider.Permanent(op, instance, fmt.Errorf("%w: %s", provider.ErrLockNotHeld, detail))
}

func checkTimeouts(op string, lockTimeout, pollTimeout time.Duration) error {
	if lockTimeout <= 0 {
		return invalid(op, "", "lock timeout must be positive, got %v", lockTimeout)
	}
	if pollTimeout < 0 {
		return invalid(op, "", "poll timeout must not be negative, got %v", pollTimeout)
	}
	return nil
}

// encodedAck is an OrchestrationAck validated and serialised before the
// transaction starts, so that bad input fails without touching the database.
type encodedAck struct {
	events       []encodedEvent
	workerItems  []encodedItem
	orchItems    []encodedItem
	cancelled    []provider.ActivityRef
	meta         provider.ExecutionMetadata
	executionID  int64
	customStatus *provider.CustomStatusUpdate
}

type encodedEvent struct {
	id   int64
	kind provider.EventKind
	data string
}

type encodedItem struct {
	item provider.WorkItem
	data string
}

func encodeAck(op string, ack provider.OrchestrationAck) (encodedAck, error) {
	out := encodedAck{meta: ack.Metadata, executionID: ack.ExecutionID, cancelled: ack.CancelledActivities, customStatus: ack.Metadata.CustomStatus}
	if ack.ExecutionID < 1 {
		return out, invalid(op, "", "execution ID must be at least 1, got %d", ack.ExecutionID)
	}
	if s := ack.Metadata.Status; s != "" && !s.Valid() {
		return out, invalid(op, "", "unknown execution status %q", s)
	}
	seen := make(map[int64]bool, len(ack.HistoryDelta))
	for _, e := range ack.HistoryDelta {
		if e.ID < 1 || e.Kind == "" {
			return out, invalid(op, "", "history event needs a positive ID and a kind, got id=%d kind=%q", e.ID, e.Kind)
		}
		if seen[e.ID] {
			return out, provider.Permanent(op, "", fmt.Errorf("%w: event ID %d appears twice in the delta", provider.ErrDuplicateEvent, e.ID))
		}
		seen[e.ID] = true
		data, err := provider.EncodeEvent(e)
		if err != nil {
			return out, invalid(op, "", "%v", err)
		}
		out.events = append(out.events, encodedEvent{id: e.ID, kind: e.Kind, data: data})
	}
	var err error
	if out.workerItems, err = encodeItems(op, ack.WorkerItems, true); err != nil {
		return out, err
	}
	if out.orchItems, err = encodeItems(op, ack.OrchestratorItems, false); err != nil {
		return out, err
	}
	return out, nil
}

func encodeItems(op string, items []provider.WorkItem, worker bool) ([]encodedItem, error) {
	out := make([]encodedItem, 0, len(items))
	for _, it := range items {
		data, err := encodeItem(op, it, worker)
		if err != nil {
			return nil, err
		}
		out = append(out, encodedItem{item: it, data: data})
	}
	return out, nil
}

func encodeItem(op string, it provider.WorkItem, worker bool) (string, error) {
	if err := it.Validate(); err != nil {
		return "", invalid(op, it.Instance, "%v", err)
	}
	if it.ForWorkerQueue() != worker {
		queue := "orchestrator"
		if worker {
			queue = "worker"
		}
		return "", invalid(op, it.Instance, "%s work item does not belong on the %s queue", it.Kind, queue)
	}
	data, err := provider.EncodeWorkItem(it)
	if err != nil {
		return "", invalid(op, it.Instance, "%v", err)
	}
	return data, nil
}
