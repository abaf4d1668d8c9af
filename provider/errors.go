package provider

import (
	"errors"
	"fmt"
)

// Sentinel causes. Provider errors wrap one of them, so callers test with errors.Is.
var (
	// ErrLockNotHeld: the lock token is unknown, expired, or already acked or
	// abandoned. The operation changed nothing. Permanent: the work is someone else's now.
	ErrLockNotHeld = errors.New("lock not held")
	// ErrDuplicateEvent: an ack tried to append a history event whose ID the
	// execution already has. The ack changed nothing.
	ErrDuplicateEvent = errors.New("duplicate history event")
	// ErrNotFound: the instance or execution does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInstanceRunning: a delete without force named a running instance.
	ErrInstanceRunning = errors.New("instance is running")
	// ErrInstanceFinished: a message was sent to an instance whose current
	// execution has ended (Completed, Failed or Terminated); nobody would read it.
	ErrInstanceFinished = errors.New("instance has finished")
	// ErrAlreadyExists: a start named an instance ID that is taken (an
	// instance with it exists, or a start of it is queued) and its ID-reuse
	// policy did not let it replace that instance. Nothing was queued.
	ErrAlreadyExists = errors.New("instance already exists")
	// ErrNotRewindable: a rewind named an instance whose current execution
	// is not the failed execution it names (it runs, completed, was rewound
	// already, or a rewind of it is queued), or a sub-orchestration.
	// Nothing was queued.
	ErrNotRewindable = errors.New("instance cannot be rewound")
	// ErrInvalidArgument: the caller passed something the contract forbids.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrCorruptData: a stored row could not be decoded.
	ErrCorruptData = errors.New("corrupt stored data")
	// ErrClosed: the provider was closed.
	ErrClosed = errors.New("provider closed")
	// ErrStale: a turn built from a cached history (TurnCached) no longer
	// matches the instance: another turn committed, a message is visible,
	// or a lock holds it. Nothing was written.
	ErrStale = errors.New("cached turn is stale")
	// ErrUnsupported: the store does not implement the fast path a request
	// asks for where no other answer declines it (a TurnNew commit). Nothing
	// was written; callers take the usual path and need not ask again.
	ErrUnsupported = errors.New("not supported by this store")
)

// Error is the error type providers return. It names the operation and, where
// one is involved, the instance, and says whether retrying may help.
type Error struct {
	Op        string
	Instance  string
	Retryable bool
	Err       error
}

func (e *Error) Error() string {
	msg := e.Op
	if e.Instance != "" {
		msg += " instance " + fmt.Sprintf("%q", e.Instance)
	}
	return msg + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Permanent wraps err as a non-retryable provider error.
func Permanent(op, instance string, err error) error {
	return &Error{Op: op, Instance: instance, Err: err}
}

// Retryable wraps err as a provider error that may succeed if tried again
// (a busy database, a dropped connection).
func Retryable(op, instance string, err error) error {
	return &Error{Op: op, Instance: instance, Retryable: true, Err: err}
}

// IsRetryable reports whether err is a provider error marked retryable.
func IsRetryable(err error) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Retryable
}

// CorruptDataError describes a stored row that could not be decoded.
type CorruptDataError struct {
	Instance string
	// What names the row: "history event 3 of execution 1", "orchestrator message 17".
	What string
	Err  error
}

func (e *CorruptDataError) Error() string {
	return fmt.Sprintf("instance %q: %s: %v", e.Instance, e.What, e.Err)
}

func (e *CorruptDataError) Unwrap() []error { return []error{ErrCorruptData, e.Err} }
