package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// ErrorClass says who is responsible for a failure; see provider.ErrorClass.
type ErrorClass = provider.ErrorClass

const (
	ErrorApplication    = provider.ErrorApplication
	ErrorInfrastructure = provider.ErrorInfrastructure
	ErrorConfiguration  = provider.ErrorConfiguration
)

// FailureKind says what kind of failure a Failure or TaskError describes; see
// provider.FailureKind. Empty for an ordinary error returned by user code.
type FailureKind = provider.FailureKind

const (
	FailurePoison           = provider.FailurePoison
	FailureCanceled         = provider.FailureCanceled
	FailurePanicked         = provider.FailurePanicked
	FailureNondeterminism   = provider.FailureNondeterminism
	FailureTimeout          = provider.FailureTimeout
	FailureLimit            = provider.FailureLimit
	FailureTerminated       = provider.FailureTerminated
	FailureBlocked          = provider.FailureBlocked
	FailureAlreadyExists    = provider.FailureAlreadyExists
	FailureUnregistered     = provider.FailureUnregistered
	FailureForeignGoroutine = provider.FailureKind("foreignGoroutine")
)

// TaskError is what awaiting a failed activity, sub-orchestration or timed-out
// attempt returns inside an orchestration.
type TaskError struct {
	// Task is "activity", "sub-orchestration" or "event".
	Task    string
	Name    string
	Class   ErrorClass
	Message string
	// Kind and Details say what kind of failure it was (poison, timeout,
	// cancelled, already exists...), so code can branch on it.
	Kind    FailureKind
	Details Failure
	cause   error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("%s %q failed (%s): %s", e.Task, e.Name, e.Class, e.Message)
}

// Unwrap exposes ErrTimeout for timed-out attempts and ErrCanceled for
// cancelled ones.
func (e *TaskError) Unwrap() error {
	switch {
	case e.cause != nil:
		return e.cause
	case e.Kind == FailureCanceled:
		return ErrCanceled
	case e.Kind == FailureTimeout:
		return ErrTimeout
	}
	return nil
}

func taskError(task, name string, d *provider.ErrorDetails) *TaskError {
	if d == nil {
		d = &provider.ErrorDetails{Class: ErrorApplication, Message: "unknown failure"}
	}
	return &TaskError{Task: task, Name: name, Class: d.Class, Message: d.Message, Kind: d.Kind, Details: failureOf(d)}
}

// ErrTimeout is wrapped by the TaskError of an activity attempt that ran past
// its RetryPolicy.Timeout.
var ErrTimeout = errors.New("timed out")

// NondeterminismError reports that orchestration code no longer makes the
// decisions its history records: it was changed incompatibly, or depends on
// something other than its inputs and the context. It is a configuration error:
// the instance fails rather than corrupt its history.
type NondeterminismError struct {
	Instance    string
	ExecutionID int64
	EventID     int64
	// Expected is what the history records; Actual is what the code did.
	Expected string
	Actual   string
}

func (e *NondeterminismError) Error() string {
	return fmt.Sprintf("nondeterministic orchestration: instance %q execution %d, history event %d: expected %s, got %s",
		e.Instance, e.ExecutionID, e.EventID, e.Expected, e.Actual)
}

// Failure describes how an instance failed or was terminated.
type Failure struct {
	Class   ErrorClass  `json:"class"`
	Message string      `json:"message"`
	Kind    FailureKind `json:"kind,omitempty"`
	// Attempts, MaxAttempts and ItemKind describe a poison failure.
	Attempts    int    `json:"attempts,omitempty"`
	MaxAttempts int    `json:"maxAttempts,omitempty"`
	ItemKind    string `json:"itemKind,omitempty"`
	// Reason is a cancellation's or termination's reason.
	Reason string `json:"reason,omitempty"`
}

func (f *Failure) Error() string { return fmt.Sprintf("%s: %s", f.Class, f.Message) }

func failureOf(d *provider.ErrorDetails) Failure {
	return Failure{Class: d.Class, Message: d.Message, Kind: d.Kind, Attempts: d.Attempts,
		MaxAttempts: d.MaxAttempts, ItemKind: d.ItemKind, Reason: d.Reason}
}

func EncodeFailure(d *provider.ErrorDetails) string {
	b, _ := json.Marshal(failureOf(d))
	return string(b)
}

func DecodeFailure(output string) *Failure {
	var f Failure
	if err := json.Unmarshal([]byte(output), &f); err != nil || f.Message == "" {
		return &Failure{Class: ErrorApplication, Message: output}
	}
	return &f
}

// DetailsOf converts an orchestration's or activity's error into what the
// history and the work item record, keeping its kind.
func DetailsOf(err error) *provider.ErrorDetails {
	d := &provider.ErrorDetails{Class: ErrorApplication, Message: err.Error()}
	var (
		te  *TaskError
		ce  *CanceledError
		nd  *NondeterminismError
		cfg *configError
		pe  *panicError
		fg  *ForeignGoroutineError
		be  *BlockedError
		le  *LimitError
	)
	switch {
	case errors.As(err, &te):
		d.Class, d.Kind = te.Class, te.Kind
		d.Attempts, d.MaxAttempts, d.ItemKind, d.Reason = te.Details.Attempts, te.Details.MaxAttempts, te.Details.ItemKind, te.Details.Reason
	case errors.As(err, &ce):
		d.Kind, d.Reason = FailureCanceled, ce.Reason
	case errors.As(err, &nd):
		d.Class, d.Kind = ErrorConfiguration, FailureNondeterminism
	case errors.As(err, &cfg):
		d.Class, d.Kind = ErrorConfiguration, FailureUnregistered
	case errors.As(err, &pe):
		d.Kind = FailurePanicked
	case errors.As(err, &fg):
		d.Class, d.Kind = ErrorConfiguration, FailureForeignGoroutine
	case errors.As(err, &be):
		d.Class, d.Kind = ErrorConfiguration, FailureBlocked
	case errors.As(err, &le):
		d.Class, d.Kind = ErrorConfiguration, FailureLimit
	}
	return d
}

// configError marks a deployment problem: an unregistered name, a bad version.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func configErrorf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// ErrCanceled is wrapped by the error of every cancelled future: a Select
// loser, Future.Cancel, a cancelled ctx.Go scope, Client.Cancel.
var ErrCanceled = errors.New("canceled")

// CanceledError is what awaiting a cancelled future returns.
type CanceledError struct {
	Reason string
}

func (e *CanceledError) Error() string { return "canceled: " + e.Reason }

// Unwrap makes errors.Is(err, ErrCanceled) hold.
func (e *CanceledError) Unwrap() error { return ErrCanceled }

// BlockedError reports orchestration code that did not yield to the engine
// within Options.StepTimeout: it blocked outside the engine (a channel, a
// mutex, time.Sleep, a go statement that awaits) or computed for too long.
// The turn is abandoned and retried with backoff; at the poison limit the
// instance fails with this error (class configuration).
type BlockedError struct {
	Instance  string
	Coroutine string
	Timeout   time.Duration
	// Stack is where the coroutine was when the deadline passed.
	Stack string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("instance %q: orchestration code (%s) did not yield to the engine within %v: it blocked outside the engine "+
		"(channel, mutex, time.Sleep, I/O) or computed too long; wait only on futures (activities, ctx.CreateTimer, ctx.Go). Blocked at:\n%s",
		e.Instance, e.Coroutine, e.Timeout, e.Stack)
}

// ForeignGoroutineError reports an engine call (an Await, a CallActivity...)
// from a goroutine the engine did not start: a go statement inside
// orchestration code. The instance fails with it; use ctx.Go instead.
type ForeignGoroutineError struct {
	Stack string
}

func (e *ForeignGoroutineError) Error() string {
	return "orchestration API called from a goroutine started with a go statement; use ctx.Go, which replays deterministically. Called from:\n" + e.Stack
}
