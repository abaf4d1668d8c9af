package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/duroxide/duroxide-go/provider"
)

// OrchestrationContext is an orchestration's only door to the outside world.
// Every method is deterministic on replay. It is shared by the instance's
// coroutines (see Go) and must not be used from ordinary goroutines.
type OrchestrationContext struct {
	t *turn
}

// InstanceID is the instance being run.
func (c *OrchestrationContext) InstanceID() string { return c.t.instance }

// ExecutionID is the current execution (it grows with ContinueAsNew).
func (c *OrchestrationContext) ExecutionID() int64 { return c.t.executionID }

// Name and Version identify the orchestration code being run.
func (c *OrchestrationContext) Name() string    { return c.t.name }
func (c *OrchestrationContext) Version() string { return c.t.version }

// IsReplaying reports whether the code is re-running decisions already in
// history (as opposed to making new ones). Side effects such as logging
// should happen only when it is false; Logger does that already.
func (c *OrchestrationContext) IsReplaying() bool { return c.t.replaying }

// Now is the deterministic current time: the time at which the event now being
// processed was first recorded.
func (c *OrchestrationContext) Now() time.Time { return c.t.curTime }

// NewGUID returns an identifier that is unique to this instance, execution
// and call, and the same on every replay.
func (c *OrchestrationContext) NewGUID() string {
	c.t.guidSeq++
	name := c.t.instance + "/" + strconv.FormatInt(c.t.executionID, 10) + "/" + strconv.Itoa(c.t.guidSeq)
	return uuid.NewSHA1(guidNamespace, []byte(name)).String()
}

var guidNamespace = uuid.MustParse("6ba7b812-9dad-11d1-80b4-00c04fd430c8")

// Logger returns a logger that drops records while the orchestration replays,
// so each message is logged once, when the decision is first made.
func (c *OrchestrationContext) Logger() *slog.Logger { return c.t.logger }

// ActivityOption configures one activity call.
type ActivityOption func(*activityCall)

type activityCall struct {
	retry *RetryPolicy
}

// WithRetry retries the activity under policy. Attempts, backoff timers and
// per-attempt timeouts are all recorded in history, so they survive crashes.
func WithRetry(policy RetryPolicy) ActivityOption {
	return func(a *activityCall) { a.retry = &policy }
}

// CallActivity schedules an activity with input (encoded as JSON) and returns
// its future result.
func (c *OrchestrationContext) CallActivity(name string, input any, opts ...ActivityOption) *Future {
	var call activityCall
	for _, o := range opts {
		o(&call)
	}
	payload, err := encodePayload(input)
	if err != nil {
		return c.failed(err)
	}
	if call.retry != nil {
		return c.callWithRetry(name, payload, *call.retry)
	}
	return c.t.issue(&action{kind: provider.EventActivityScheduled, name: name, input: payload}).future
}

// CreateTimer returns a future that resolves once d has passed. The timer is
// durable: it fires even if every process restarts meanwhile.
func (c *OrchestrationContext) CreateTimer(d time.Duration) *Future {
	if d < 0 {
		d = 0
	}
	fireAt := c.t.curTime.Add(d).UnixMilli()
	return c.t.issue(&action{kind: provider.EventTimerCreated, fireAt: fireAt}).future
}

// WaitForEvent returns a future for the next external event with this name
// raised on the instance (Client.RaiseEvent). Events raised before anyone waits
// are kept, in order, for the next wait.
func (c *OrchestrationContext) WaitForEvent(name string) *Future {
	a := c.t.issue(&action{kind: provider.EventExternalSubscribed, name: name})
	c.t.subscribe(name, a.future)
	return a.future
}

// SubOrchestrationOption configures a sub-orchestration call.
type SubOrchestrationOption func(*subCall)

type subCall struct {
	instanceID, version string
}

// WithInstanceID sets the child's instance ID (default: derived from the
// parent's instance, execution and call order).
func WithInstanceID(id string) SubOrchestrationOption {
	return func(s *subCall) { s.instanceID = id }
}

// WithVersion pins the child to an orchestration version (default: latest).
func WithVersion(v string) SubOrchestrationOption {
	return func(s *subCall) { s.version = v }
}

// CallSubOrchestration starts a child orchestration and returns its future
// result. Terminating the parent terminates the child.
func (c *OrchestrationContext) CallSubOrchestration(name string, input any, opts ...SubOrchestrationOption) *Future {
	var call subCall
	for _, o := range opts {
		o(&call)
	}
	payload, err := encodePayload(input)
	if err != nil {
		return c.failed(err)
	}
	if call.instanceID == "" {
		call.instanceID = fmt.Sprintf("%s::%d::%d", c.t.instance, c.t.executionID, c.t.actionSeq+1)
	}
	a := &action{kind: provider.EventSubOrchestrationScheduled, name: name, input: payload, instance: call.instanceID, version: call.version}
	return c.t.issue(a).future
}

// StartOrchestration starts an independent orchestration instance ("fire and
// forget"): nothing waits for it and it outlives this one. Starting an ID that
// already exists does nothing.
func (c *OrchestrationContext) StartOrchestration(name, instanceID string, input any) error {
	payload, err := encodePayload(input)
	if err != nil {
		return err
	}
	a := c.t.issue(&action{kind: provider.EventOrchestrationChained, name: name, input: payload, instance: instanceID})
	a.future.resolve("", nil)
	return nil
}

// continueAsNew is returned by ContinueAsNew; the engine recognises it.
type continueAsNew struct {
	input   string
	version string
}

func (e *continueAsNew) Error() string { return "orchestration continued as new" }

// ContinueAsNew ends this execution and starts a fresh one of the same
// instance with input and an empty history (eternal orchestrations use it to
// keep their history bounded). Return its result from the orchestration:
//
//	return 0, ctx.ContinueAsNew(count + 1)
//
// The new execution runs the latest registered version.
func (c *OrchestrationContext) ContinueAsNew(input any) error {
	payload, err := encodePayload(input)
	if err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	return &continueAsNew{input: payload}
}

// SetCustomStatus publishes v (as JSON) as the instance's custom status, for
// clients and the operator to read while the orchestration runs.
func (c *OrchestrationContext) SetCustomStatus(v any) {
	payload, err := encodePayload(v)
	if err != nil {
		c.t.logger.Error("custom status not set", "error", err)
		return
	}
	c.t.customStatus, c.t.customStatusSet = &payload, true
}

// ClearCustomStatus removes the instance's custom status.
func (c *OrchestrationContext) ClearCustomStatus() {
	c.t.customStatus, c.t.customStatusSet = nil, true
}

// Go runs fn as another coroutine of this orchestration. Use it instead of the
// go statement, which would break deterministic replay.
func (c *OrchestrationContext) Go(fn func(ctx *OrchestrationContext)) {
	c.t.sched.spawn(func() { fn(c) })
}

// Select blocks until at least one future is done and returns the index of the
// one that completed first in history order; the same on every replay.
func (c *OrchestrationContext) Select(futures ...*Future) int {
	if len(futures) == 0 {
		panic("duroxide: Select needs at least one future")
	}
	c.t.sched.block(func() bool {
		for _, f := range futures {
			if f.done {
				return true
			}
		}
		return false
	})
	best := -1
	for i, f := range futures {
		if f.done && (best < 0 || f.order < futures[best].order) {
			best = i
		}
	}
	return best
}

// WhenAll blocks until every future is done and returns the first failure in
// argument order, if any.
func (c *OrchestrationContext) WhenAll(futures ...*Future) error {
	c.t.sched.block(func() bool {
		for _, f := range futures {
			if !f.done {
				return false
			}
		}
		return true
	})
	for _, f := range futures {
		if f.err != nil {
			return f.err
		}
	}
	return nil
}

// failed returns a future that has already failed with err.
func (c *OrchestrationContext) failed(err error) *Future {
	f := newFuture(c.t)
	f.resolve("", err)
	return f
}

// replaySafeHandler drops log records while the orchestration replays.
type replaySafeHandler struct {
	inner     slog.Handler
	replaying func() bool
}

func (h replaySafeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return !h.replaying() && h.inner.Enabled(ctx, l)
}

func (h replaySafeHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.replaying() {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h replaySafeHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return replaySafeHandler{inner: h.inner.WithAttrs(a), replaying: h.replaying}
}

func (h replaySafeHandler) WithGroup(name string) slog.Handler {
	return replaySafeHandler{inner: h.inner.WithGroup(name), replaying: h.replaying}
}
