package engine

import "fmt"

// Limits the runtime enforces, all in one place. Each is checked before a
// turn is committed, and exceeding one fails clearly (a *LimitError, with
// Failure.Kind FailureLimit) instead of storing something unbounded.
const (
	// MaxPayloadBytes bounds one encoded payload: an orchestration's or
	// activity's input or output, an event's data, a continue-as-new input.
	// Exceeded, the call that encodes it fails (Start and RaiseEvent return
	// the error; inside an orchestration the future fails; an activity's
	// result becomes its failure; an orchestration's output fails it).
	MaxPayloadBytes = 16 << 20

	// MaxHistoryEvents bounds one execution's history. A turn that would pass
	// it stores none of its events: the execution fails from the history it
	// had. Eternal orchestrations use ContinueAsNew to start each execution
	// with a fresh history.
	MaxHistoryEvents = 50_000

	// MaxCustomStatusBytes bounds the custom status. A turn that ends with a
	// larger one fails the orchestration.
	MaxCustomStatusBytes = 256 << 10

	// MaxCarryForwardEvents bounds the external events an execution recorded
	// but never consumed and that ContinueAsNew carries into the next one.
	// Past it the orchestration fails (it ignores events it receives) rather
	// than dropping any. Messages fetched in the same batch after the
	// execution ended are always carried: they are bounded by the batch.
	MaxCarryForwardEvents = 20

	// MaxInboxEvents bounds the external events received and not yet
	// consumed by a wait. One more fails the orchestration instead of
	// buffering without end.
	MaxInboxEvents = 1_000

	// MaxLocalActivitiesPerTurn bounds the WithLocal activities one turn
	// runs before it commits, so a loop of them cannot hold an instance's
	// lock and its uncommitted results without end. Past it, local
	// activities are queued for workers like any other.
	MaxLocalActivitiesPerTurn = 100
)

// LimitError reports an exceeded limit.
type LimitError struct {
	// What names the limit: "payload", "history", "custom status", "inbox", "carry-forward".
	What  string
	Size  int
	Limit int
	Hint  string
}

func (e *LimitError) Error() string {
	msg := fmt.Sprintf("%s limit exceeded: %d > %d", e.What, e.Size, e.Limit)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}
