// Package encode validates and serialises what providers are asked to store,
// so that bad input fails before any transaction starts, the same way in every provider.
package encode

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Invalid returns a permanent ErrInvalidArgument error.
func Invalid(op, instance, format string, args ...any) error {
	return provider.Permanent(op, instance, fmt.Errorf("%w: "+format, append([]any{provider.ErrInvalidArgument}, args...)...))
}

// Stale returns a permanent ErrStale error: a cached turn no longer matches
// its instance.
func Stale(op, instance, detail string) error {
	return provider.Permanent(op, instance, fmt.Errorf("%w: %s", provider.ErrStale, detail))
}

// LockNotHeld returns a permanent ErrLockNotHeld error.
func LockNotHeld(op, instance, detail string) error {
	return provider.Permanent(op, instance, fmt.Errorf("%w: %s", provider.ErrLockNotHeld, detail))
}

// CheckLeasePositions validates the worker-item positions a leasing ack asks
// for: each names one of the ack's n items, and none twice.
func CheckLeasePositions(op string, lease []int, n int) error {
	seen := make(map[int]bool, len(lease))
	for _, i := range lease {
		if i < 0 || i >= n {
			return Invalid(op, "", "lease position %d is not one of the ack's %d worker items", i, n)
		}
		if seen[i] {
			return Invalid(op, "", "lease position %d is asked for twice", i)
		}
		seen[i] = true
	}
	return nil
}

// CheckLeasing validates a leasing ack's arguments: the leases' timeout
// when it leases anything, the other lock timeouts it takes (a continued
// turn's), and its lease positions.
func CheckLeasing(op string, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration, lockTimeouts ...time.Duration) error {
	if len(lease) > 0 {
		lockTimeouts = append(lockTimeouts, leaseFor)
	}
	for _, d := range lockTimeouts {
		if err := CheckTimeouts(op, d, 0); err != nil {
			return err
		}
	}
	if err := CheckLeasePositions(op, lease, len(ack.WorkerItems)); err != nil {
		return err
	}
	for _, i := range lease {
		if ack.WorkerItems[i].Session != "" {
			return Invalid(op, "", "activity %d belongs to session %q: its session's owner fetches it, an ack does not lease it",
				ack.WorkerItems[i].ID, ack.WorkerItems[i].Session)
		}
	}
	return nil
}

// CheckTimeouts validates a fetch's lock and poll timeouts.
func CheckTimeouts(op string, lockTimeout, pollTimeout time.Duration) error {
	if lockTimeout <= 0 {
		return Invalid(op, "", "lock timeout must be positive, got %v", lockTimeout)
	}
	if pollTimeout < 0 {
		return Invalid(op, "", "poll timeout must not be negative, got %v", pollTimeout)
	}
	return nil
}

// Ack is an OrchestrationAck validated and serialised before the
// transaction starts, so that bad input fails without touching the database.
type Ack struct {
	Events      []Event
	WorkerItems []Item
	OrchItems   []Item
	Cancelled   []provider.ActivityRef
	// CancelledTimers are deleted from the acking instance's queue.
	CancelledTimers []provider.TimerRef
	Meta            provider.ExecutionMetadata
	ExecutionID     int64
	CustomStatus    *provider.CustomStatusUpdate
	// Values is nil when the ack changes no value.
	Values *provider.ValuesUpdate
}

// Event is a history event and its stored form.
type Event struct {
	ID   int64
	Kind provider.EventKind
	Data string
}

// Item is a work item and its stored form.
type Item struct {
	Item provider.WorkItem
	Data string
}

// EncodeAck validates an ack and serialises its events and items.
func EncodeAck(op string, ack provider.OrchestrationAck) (Ack, error) {
	out := Ack{Meta: ack.Metadata, ExecutionID: ack.ExecutionID, Cancelled: ack.CancelledActivities, CancelledTimers: ack.CancelledTimers, CustomStatus: ack.Metadata.CustomStatus}
	if ack.ExecutionID < 1 {
		return out, Invalid(op, "", "execution ID must be at least 1, got %d", ack.ExecutionID)
	}
	if s := ack.Metadata.Status; s != "" && !s.Valid() {
		return out, Invalid(op, "", "unknown execution status %q", s)
	}
	if err := ack.Values.Validate(); err != nil {
		return out, Invalid(op, "", "%v", err)
	}
	if !ack.Values.Empty() {
		out.Values = ack.Values
	}
	seen := make(map[int64]bool, len(ack.HistoryDelta))
	for _, e := range ack.HistoryDelta {
		if e.ID < 1 || e.Kind == "" {
			return out, Invalid(op, "", "history event needs a positive ID and a kind, got id=%d kind=%q", e.ID, e.Kind)
		}
		if seen[e.ID] {
			return out, provider.Permanent(op, "", fmt.Errorf("%w: event ID %d appears twice in the delta", provider.ErrDuplicateEvent, e.ID))
		}
		seen[e.ID] = true
		data, err := provider.EncodeEvent(e)
		if err != nil {
			return out, Invalid(op, "", "%v", err)
		}
		out.Events = append(out.Events, Event{ID: e.ID, Kind: e.Kind, Data: data})
	}
	var err error
	if out.WorkerItems, err = encodeItems(op, ack.WorkerItems, true); err != nil {
		return out, err
	}
	if out.OrchItems, err = encodeItems(op, ack.OrchestratorItems, false); err != nil {
		return out, err
	}
	return out, nil
}

func encodeItems(op string, items []provider.WorkItem, worker bool) ([]Item, error) {
	out := make([]Item, 0, len(items))
	for _, it := range items {
		data, err := EncodeItem(op, it, worker)
		if err != nil {
			return nil, err
		}
		out = append(out, Item{Item: it, Data: data})
	}
	return out, nil
}

// EncodeItem validates a work item for its queue and serialises it.
func EncodeItem(op string, it provider.WorkItem, worker bool) (string, error) {
	if err := it.Validate(); err != nil {
		return "", Invalid(op, it.Instance, "%v", err)
	}
	if it.ForWorkerQueue() != worker {
		queue := "orchestrator"
		if worker {
			queue = "worker"
		}
		return "", Invalid(op, it.Instance, "%s work item does not belong on the %s queue", it.Kind, queue)
	}
	data, err := provider.EncodeWorkItem(it)
	if err != nil {
		return "", Invalid(op, it.Instance, "%v", err)
	}
	return data, nil
}

// Cause serialises an abandon's cause for storage; nil stores nothing.
func Cause(op string, cause *provider.ErrorDetails) (*string, error) {
	if cause == nil {
		return nil, nil
	}
	b, err := json.Marshal(cause)
	if err != nil {
		return nil, Invalid(op, "", "cause: %v", err)
	}
	s := string(b)
	return &s, nil
}

// DecodeCause reads a stored cause; what cannot be read is reported as its text.
func DecodeCause(data string) *provider.ErrorDetails {
	if data == "" {
		return nil
	}
	var d provider.ErrorDetails
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		return &provider.ErrorDetails{Class: provider.ErrorInfrastructure, Message: "unreadable stored error: " + data}
	}
	return &d
}

// CheckFirstTurn rejects a first turn that cannot create its instance (no
// instance, another execution than the first, no orchestration name in its
// metadata) and bad leasing arguments, as the providers' TurnNew commit
// takes them.
func CheckFirstTurn(op, instance string, ack provider.OrchestrationAck, lease []int, lockTimeout time.Duration) error {
	if err := CheckLeasing(op, ack, lease, lockTimeout); err != nil {
		return err
	}
	switch {
	case instance == "":
		return Invalid(op, instance, "an instance ID is required")
	case ack.ExecutionID != 1:
		return Invalid(op, instance, "a first turn is for execution 1, got %d", ack.ExecutionID)
	case ack.Metadata.OrchestrationName == "":
		return Invalid(op, instance, "the first turn of an instance must name its orchestration in the metadata")
	}
	return nil
}

// WakesOthers reports whether the ack queues an orchestrator message that a
// turn of instance continued in the same commit does not take: one for
// another instance, or a timer already due at nowMs. Timers due later wake
// nobody: the provider notes their due time (wake.Due.Acked) for its sleeping
// fetchers.
func (a Ack) WakesOthers(instance string, nowMs int64) bool {
	for _, it := range a.OrchItems {
		if it.Item.Instance != instance || (it.Item.Kind == provider.WorkTimerFired && it.Item.FireAt <= nowMs) {
			return true
		}
	}
	return false
}

// WakesAny reports whether the ack queues an orchestrator message visible at
// nowMs: anything but a timer due later.
func (a Ack) WakesAny(nowMs int64) bool {
	for _, it := range a.OrchItems {
		if it.Item.Kind != provider.WorkTimerFired || it.Item.FireAt <= nowMs {
			return true
		}
	}
	return false
}

// QueuedTimers returns the stored forms of the timers a fetched turn
// delivers, as its ack stored them.
func QueuedTimers(item *provider.OrchestrationItem) []string {
	var out []string
	for _, m := range item.Messages {
		if m.Kind != provider.WorkTimerFired {
			continue
		}
		if data, err := provider.EncodeWorkItem(m); err == nil {
			out = append(out, data)
		}
	}
	return out
}

// Start is a start and its events, checked and serialised (StartInstance).
type Start struct {
	Data   string
	Events []string
	Reuse  provider.IDReusePolicy
}

// EncodeStartInTx is EncodeStart for a start in the caller's transaction
// (provider.TxStarter), which cannot lock its first turn.
func EncodeStartInTx(op string, req provider.StartRequest) (Start, error) {
	if req.LockFor != 0 {
		return Start{}, Invalid(op, req.Start.Instance, "a start in the caller's transaction cannot lock its first turn")
	}
	return EncodeStart(op, req.Start, req.Events, req.Reuse)
}

// EncodeStart validates a start, its events and its ID-reuse policy and
// serialises them.
func EncodeStart(op string, start provider.WorkItem, events []provider.WorkItem, reuse provider.IDReusePolicy) (Start, error) {
	if start.Kind != provider.WorkStartOrchestration {
		return Start{}, Invalid(op, start.Instance, "a start must be a %s item, not %s", provider.WorkStartOrchestration, start.Kind)
	}
	if !reuse.Valid() {
		return Start{}, Invalid(op, start.Instance, "unknown ID-reuse policy %q", reuse)
	}
	data, err := EncodeItem(op, start, false)
	if err != nil {
		return Start{}, err
	}
	out := Start{Data: data, Events: make([]string, 0, len(events)), Reuse: reuse.OrDefault()}
	for _, ev := range events {
		if ev.Kind != provider.WorkExternalRaised || ev.Instance != start.Instance {
			return Start{}, Invalid(op, start.Instance, "a start's events must be %s items for its instance, not %s for %q",
				provider.WorkExternalRaised, ev.Kind, ev.Instance)
		}
		data, err := EncodeItem(op, ev, false)
		if err != nil {
			return Start{}, err
		}
		out.Events = append(out.Events, data)
	}
	return out, nil
}
