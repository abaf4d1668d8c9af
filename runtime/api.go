package runtime

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// The orchestration API is defined by the replay engine
// (runtime/internal/engine), which runs it; this file is its public name.
// The engine's own documentation covers each method.

// OrchestrationContext is an orchestration's only door to the outside world.
// Every method is deterministic on replay:
//   - work: CallActivity, CallSubOrchestration, StartOrchestration,
//     CreateTimer, WaitForEvent;
//   - waiting: Select, WaitAny, WhenAll, Go (a coroutine), WithoutCancel;
//   - the instance: InstanceID, ExecutionID, Name, Version, Now, NewGUID,
//     IsReplaying, Logger;
//   - status: SetCustomStatus, CustomStatus, ClearCustomStatus;
//   - durable values: SetValue, Value, ValueKeys, ClearValue, ClearValues;
//   - a new execution: ContinueAsNew, ContinueAsNewVersion.
//
// Each coroutine of an instance (Go) has its own context, carrying its
// cancellation scope; none may be used from ordinary goroutines. The methods
// are documented with the engine: go doc ./runtime/internal/engine
// OrchestrationContext.
type OrchestrationContext = engine.OrchestrationContext

// Future is the pending result of a durable operation: an activity, a timer,
// an external event, a sub-orchestration or a coroutine started with ctx.Go.
// Await blocks the calling orchestration goroutine until the result is
// known; Cancel gives the operation up, recorded in history.
type Future = engine.Future

// Registry maps orchestration names (with versions) and activity names to
// code. Register everything before the runtime starts; lookups are safe
// concurrently. A new instance runs the latest version registered, or the
// one Registry.UseVersion names; an instance keeps the version of its
// execution (ContinueAsNewVersion moves it on).
type Registry = engine.Registry

// OrchestrationFunc is the untyped form of an orchestration: JSON in, JSON out.
// Most code registers typed functions with RegisterOrchestration.
type OrchestrationFunc = engine.OrchestrationFunc

// ActivityFunc is the untyped form of an activity: JSON in, JSON out.
type ActivityFunc = engine.ActivityFunc

// ActivityOption configures one activity call (WithRetry, WithLocal).
type ActivityOption = engine.ActivityOption

// SubOrchestrationOption configures one sub-orchestration call
// (WithInstanceID, WithVersion).
type SubOrchestrationOption = engine.SubOrchestrationOption

// ActivityInfo describes the activity execution a context belongs to.
type ActivityInfo = engine.ActivityInfo

// RetryPolicy retries a failed activity. The zero value means one attempt.
type RetryPolicy = engine.RetryPolicy

// Backoff is how the wait between attempts grows.
type Backoff = engine.Backoff

// InstanceStatus is where an instance is in its life, as Client.Status reports it.
type InstanceStatus = engine.InstanceStatus

// Status is an instance's state as last committed (Client.Status).
type Status = engine.Status

// ReplayOption gives Replay what a history does not record.
type ReplayOption = engine.ReplayOption

// ErrorClass says who is responsible for a failure; see provider.ErrorClass.
type ErrorClass = provider.ErrorClass

// FailureKind says what kind of failure a Failure or TaskError describes; see
// provider.FailureKind. Empty for an ordinary error returned by user code.
type FailureKind = provider.FailureKind

// The errors orchestration code and clients see.
type (
	// TaskError is what awaiting a failed activity, sub-orchestration or
	// timed-out attempt returns inside an orchestration.
	TaskError = engine.TaskError
	// Failure is why an instance failed or was terminated (Status.Failure).
	Failure = engine.Failure
	// NondeterminismError says where code stopped matching its history.
	NondeterminismError = engine.NondeterminismError
	// CanceledError is what a cancelled future resolves with
	// (errors.Is(err, ErrCanceled)).
	CanceledError = engine.CanceledError
	// BlockedError says orchestration code ran past its step timeout
	// without yielding.
	BlockedError = engine.BlockedError
	// ForeignGoroutineError says an orchestration call came from a
	// goroutine the engine does not run.
	ForeignGoroutineError = engine.ForeignGoroutineError
	// LimitError says a payload, history or turn went past a limit.
	LimitError = engine.LimitError
)

var (
	// ErrCanceled is what errors.Is finds in a cancelled operation's error.
	ErrCanceled = engine.ErrCanceled
	// ErrTimeout is what errors.Is finds in an attempt that timed out.
	ErrTimeout = engine.ErrTimeout
	// ErrReplayNeedsInstance means a history did not replay and the code read
	// the instance ID, which the replay was not given: replay again with
	// ReplayInstance.
	ErrReplayNeedsInstance = engine.ErrReplayNeedsInstance
)

const (
	ErrorApplication    = provider.ErrorApplication
	ErrorInfrastructure = provider.ErrorInfrastructure
	ErrorConfiguration  = provider.ErrorConfiguration
)

const (
	FailurePoison           = engine.FailurePoison
	FailureCanceled         = engine.FailureCanceled
	FailurePanicked         = engine.FailurePanicked
	FailureNondeterminism   = engine.FailureNondeterminism
	FailureTimeout          = engine.FailureTimeout
	FailureLimit            = engine.FailureLimit
	FailureTerminated       = engine.FailureTerminated
	FailureBlocked          = engine.FailureBlocked
	FailureAlreadyExists    = engine.FailureAlreadyExists
	FailureUnregistered     = engine.FailureUnregistered
	FailureForeignGoroutine = engine.FailureForeignGoroutine
)

// Purposes the runtime records on its own timers (the Reason of their
// TimerCreated events, followed by the activity's name): a retry's backoff
// and an attempt's timeout. The orchestration's own timers have none.
const (
	TimerRetryBackoff   = engine.TimerRetryBackoff
	TimerAttemptTimeout = engine.TimerAttemptTimeout
)

const (
	// StatusPending: the start is queued; no worker has run the first turn yet.
	StatusPending = engine.StatusPending
	// StatusRunning: the instance has started and not finished. It may be
	// waiting, or stalled (Status.LastError says why).
	StatusRunning    = engine.StatusRunning
	StatusCompleted  = engine.StatusCompleted
	StatusFailed     = engine.StatusFailed
	StatusTerminated = engine.StatusTerminated
)

const (
	BackoffExponential = engine.BackoffExponential
	BackoffLinear      = engine.BackoffLinear
	BackoffFixed       = engine.BackoffFixed
)

// Limits the runtime enforces. Each is checked before a turn is committed,
// and exceeding one fails clearly (a *LimitError, with Failure.Kind
// FailureLimit) instead of storing something unbounded.
const (
	// MaxPayloadBytes bounds one encoded payload: an orchestration's or
	// activity's input or output, an event's data, a continue-as-new input.
	MaxPayloadBytes = engine.MaxPayloadBytes
	// MaxHistoryEvents bounds one execution's history; eternal
	// orchestrations use ContinueAsNew to start each execution afresh.
	MaxHistoryEvents = engine.MaxHistoryEvents
	// MaxCustomStatusBytes bounds the custom status.
	MaxCustomStatusBytes = engine.MaxCustomStatusBytes
	// MaxCarryForwardEvents bounds the unconsumed external events
	// ContinueAsNew carries into the next execution.
	MaxCarryForwardEvents = engine.MaxCarryForwardEvents
	// MaxInboxEvents bounds the external events received and not yet
	// consumed by a wait.
	MaxInboxEvents = engine.MaxInboxEvents
	// MaxLocalActivitiesPerTurn bounds the WithLocal activities one turn
	// runs; past it they are queued for workers.
	MaxLocalActivitiesPerTurn = engine.MaxLocalActivitiesPerTurn
	// MaxValueKeyBytes, MaxValueBytes and MaxValueKeys bound an instance's
	// durable values (OrchestrationContext.SetValue): a key, one value's
	// JSON, and how many keys it holds. SetValue refuses what exceeds them.
	MaxValueKeyBytes = engine.MaxValueKeyBytes
	MaxValueBytes    = engine.MaxValueBytes
	MaxValueKeys     = engine.MaxValueKeys
)

// DefaultVersion is the version of orchestrations registered without one.
const DefaultVersion = engine.DefaultVersion

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return engine.NewRegistry() }

// RegisterOrchestration registers a typed orchestration at DefaultVersion.
// It panics on a duplicate or invalid registration: those are programming
// errors found at startup, as with http.ServeMux.
func RegisterOrchestration[In, Out any](r *Registry, name string, fn func(ctx *OrchestrationContext, input In) (Out, error)) {
	engine.RegisterOrchestration(r, name, fn)
}

// RegisterOrchestrationVersion registers a typed orchestration at version.
func RegisterOrchestrationVersion[In, Out any](r *Registry, name, version string, fn func(ctx *OrchestrationContext, input In) (Out, error)) {
	engine.RegisterOrchestrationVersion(r, name, version, fn)
}

// RegisterActivity registers a typed activity. It panics on a duplicate name.
func RegisterActivity[In, Out any](r *Registry, name string, fn func(ctx context.Context, input In) (Out, error)) {
	engine.RegisterActivity(r, name, fn)
}

// Await is the typed form of Future.Await.
func Await[T any](f *Future) (T, error) { return engine.Await[T](f) }

// WithRetry retries the activity under policy; each attempt is recorded.
func WithRetry(policy RetryPolicy) ActivityOption { return engine.WithRetry(policy) }

// WithLocal runs the activity inside the orchestration's turn, in the
// process running the turn, and commits its schedule and result with the
// turn: for short activities. It falls back to the worker queue when this
// process lacks the code or does not take the activity's tag.
func WithLocal() ActivityOption { return engine.WithLocal() }

// WithTag routes the activity to the workers whose Options.ActivityTags
// take tag (a pool of GPU machines, say). An activity whose tag no running
// worker takes waits in the queue: bound it with a timeout.
func WithTag(tag string) ActivityOption { return engine.WithTag(tag) }

// WithSession runs the activity on the worker that owns session id, with
// every other activity of the session: for activities that keep a
// process-local resource between calls (ActivityInfo.Session is its key).
func WithSession(id string) ActivityOption { return engine.WithSession(id) }

// TagFilter says which activities a runtime runs by their tag
// (Options.ActivityTags); the zero value runs untagged ones.
type TagFilter = provider.TagFilter

// ParseTagFilter reads a TagFilter from text: "gpu,ml" (those tags), "-,gpu"
// (untagged ones too), "*" (all), "" (untagged only).
func ParseTagFilter(s string) (TagFilter, error) { return provider.ParseTagFilter(s) }

// WithInstanceID gives a sub-orchestration its instance ID (by default one
// derived from the parent's).
func WithInstanceID(id string) SubOrchestrationOption { return engine.WithInstanceID(id) }

// WithVersion runs a sub-orchestration at version (by default the highest
// registered).
func WithVersion(v string) SubOrchestrationOption { return engine.WithVersion(v) }

// ActivityInfoFrom returns the ActivityInfo of an activity's context.
func ActivityInfoFrom(ctx context.Context) (ActivityInfo, bool) { return engine.ActivityInfoFrom(ctx) }

// ReplayInstance names the instance the history belongs to, for Replay.
func ReplayInstance(id string) ReplayOption { return engine.ReplayInstance(id) }

// Replay runs reg's code against the recorded history of one execution, as
// a worker would on its next turn, and returns the first place where the
// code no longer makes the recorded decisions (a *NondeterminismError). Nil
// means the code is compatible with the history. Nothing is executed.
// Check a new build against histories recorded by the old one before
// rolling it out.
func Replay(reg *Registry, history []provider.Event, opts ...ReplayOption) error {
	return engine.Replay(reg, history, opts...)
}
