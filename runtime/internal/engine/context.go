package engine

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
// Every method is deterministic on replay. Each coroutine of an instance (see
// Go) has its own context, carrying its cancellation scope; none may be used
// from ordinary goroutines.
type OrchestrationContext struct {
	t     *turn
	scope *scope
}

// InstanceID is the instance being run.
func (c *OrchestrationContext) InstanceID() string { return c.t.instanceID() }

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
	return uuid.NewSHA1(guidNamespace, []byte(guidName(c.t.instanceID(), c.t.executionID, c.t.guidSeq))).String()
}

// Err is nil until this context's scope is cancelled (Client.Cancel for the
// orchestration's own context, a cancelled or Select-losing Go future for a
// coroutine's); then it is a *CanceledError. Work started on a cancelled
// context fails at once with that error: use WithoutCancel for compensation.
func (c *OrchestrationContext) Err() error {
	if c.scope.err == nil {
		return nil
	}
	return c.scope.err
}

// WithoutCancel returns a context whose work is not cancelled with c's scope,
// for cleanup and compensation after a cancellation (like context.WithoutCancel).
func (c *OrchestrationContext) WithoutCancel() *OrchestrationContext {
	return &OrchestrationContext{t: c.t, scope: &scope{}}
}

var guidNamespace = uuid.MustParse("6ba7b812-9dad-11d1-80b4-00c04fd430c8")

// Logger returns a logger that drops records while the orchestration replays,
// so each message is logged once, when the decision is first made.
func (c *OrchestrationContext) Logger() *slog.Logger { return c.t.logger }

// ActivityOption configures one activity call.
type ActivityOption func(*activityCall)

type activityCall struct {
	retry   *RetryPolicy
	local   bool
	tag     string
	session string
}

// WithRetry retries the activity under policy. Attempts, backoff timers and
// per-attempt timeouts are all recorded in history, so they survive crashes.
func WithRetry(policy RetryPolicy) ActivityOption {
	return func(a *activityCall) { a.retry = &policy }
}

// WithTag routes the activity to the workers that take tag (their
// runtime's Options.ActivityTags), such as a pool of GPU machines; without
// it any worker taking untagged activities runs it. Nothing else routes
// it: an activity whose tag no running worker takes waits in the queue,
// so bound it with WithRetry's Timeout or a Select against a timer. The
// tag is recorded with the schedule; replay does not compare it.
func WithTag(tag string) ActivityOption {
	return func(a *activityCall) { a.tag = tag }
}

// CallActivity schedules an activity with input (encoded as JSON) and returns
// its future result.
func (c *OrchestrationContext) CallActivity(name string, input any, opts ...ActivityOption) *Future {
	var call activityCall
	for _, o := range opts {
		o(&call)
	}
	if err := call.validate(); err != nil {
		return c.failed(fmt.Errorf("activity %q: %w", name, err))
	}
	payload, err := EncodePayload(input)
	if err != nil {
		return c.failed(err)
	}
	if call.retry != nil {
		return c.callWithRetry(name, payload, *call.retry, call)
	}
	return c.decide(&action{kind: provider.EventActivityScheduled, name: name, input: payload, local: call.local, tag: call.tag,
		session: call.session})
}

// validate checks the call's tag and session.
func (a activityCall) validate() error {
	if a.tag != "" {
		if err := provider.ValidateTag(a.tag); err != nil {
			return err
		}
	}
	if a.session != "" {
		return provider.ValidateSessionID(a.session)
	}
	return nil
}

// WithSession runs the activity on the worker that owns session id, with
// every other activity of the session, while that worker lives and the
// session sees work (Options.SessionIdleTimeout); then another worker takes
// the session over. Use it for an activity that keeps a process-local
// resource (a model loaded, a connection, a temp dir) across calls: key the
// resource by ActivityInfo.Session, and rebuild it when a call finds none
// (the session moved). Session activities never run locally (WithLocal).
func WithSession(id string) ActivityOption {
	return func(a *activityCall) { a.session = id }
}

// decide issues a decision in c's scope, or fails at once when the scope is
// cancelled.
func (c *OrchestrationContext) decide(a *action) *Future {
	if c.scope.err != nil {
		return c.failed(c.scope.err)
	}
	f := c.t.issue(a).future
	c.scope.track(f)
	return f
}

// CreateTimer returns a future that resolves once d has passed. The timer is
// durable: it fires even if every process restarts meanwhile.
func (c *OrchestrationContext) CreateTimer(d time.Duration) *Future {
	return c.timer(d, "")
}

// timer is CreateTimer with the purpose the runtime records for a timer of
// its own (Event.Reason: a retry's backoff, an attempt's timeout), so a
// history tells it from the code's timers. Replay matches timers by kind
// alone, so histories recorded without it replay the same.
func (c *OrchestrationContext) timer(d time.Duration, purpose string) *Future {
	if d < 0 {
		d = 0
	}
	fireAt := c.t.curTime.Add(d).UnixMilli()
	return c.decide(&action{kind: provider.EventTimerCreated, fireAt: fireAt, reason: purpose})
}

// WaitForEvent returns a future for the next external event with this name
// raised on the instance (Client.RaiseEvent). Events raised before anyone waits
// are kept, in order, for the next wait (up to MaxInboxEvents), and carried
// over a ContinueAsNew. Waits take events in the order they were made; a
// cancelled wait (a Select loser, Future.Cancel) never takes one.
func (c *OrchestrationContext) WaitForEvent(name string) *Future {
	f := c.decide(&action{kind: provider.EventExternalSubscribed, name: name})
	if !f.done {
		c.t.subscribe(name, f)
	}
	return f
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
// result. Terminating the parent terminates the child; so does cancelling the
// future. When an instance with the child's ID already exists (and is not
// this very call's child), the future fails with Kind FailureAlreadyExists.
func (c *OrchestrationContext) CallSubOrchestration(name string, input any, opts ...SubOrchestrationOption) *Future {
	var call subCall
	for _, o := range opts {
		o(&call)
	}
	payload, err := EncodePayload(input)
	if err != nil {
		return c.failed(err)
	}
	if call.instanceID == "" {
		call.instanceID = fmt.Sprintf("%s::%d::%d", c.t.instanceID(), c.t.executionID, c.t.actionSeq+1)
	}
	a := &action{kind: provider.EventSubOrchestrationScheduled, name: name, input: payload, instance: call.instanceID, version: call.version}
	return c.decide(a)
}

// StartOrchestration starts an independent orchestration instance ("fire and
// forget"): nothing waits for it and it outlives this one. Starting an ID that
// already exists does nothing (as Client.Start).
func (c *OrchestrationContext) StartOrchestration(name, instanceID string, input any) error {
	payload, err := EncodePayload(input)
	if err != nil {
		return err
	}
	if c.scope.err != nil {
		return c.scope.err
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
// The new execution runs the version the registry's policy names (the
// latest registered, unless Registry.UseVersion says otherwise), resolved
// by the process that runs its first turn.
func (c *OrchestrationContext) ContinueAsNew(input any) error {
	return c.ContinueAsNewVersion("", input)
}

// ContinueAsNewVersion is ContinueAsNew into version ("" as ContinueAsNew):
// how an eternal orchestration moves to new code. Only processes that
// register version run the new execution.
func (c *OrchestrationContext) ContinueAsNewVersion(version string, input any) error {
	if version != "" && !provider.ValidVersion(version) {
		return fmt.Errorf("continue as new: version %q is not a semantic version", version)
	}
	payload, err := EncodePayload(input)
	if err != nil {
		return fmt.Errorf("continue as new: %w", err)
	}
	return &continueAsNew{input: payload, version: version}
}

// SetCustomStatus publishes v (as JSON) as the instance's custom status, for
// clients and the operator to read while the orchestration runs. It lasts
// across ContinueAsNew. A value that cannot be encoded, or is larger than
// MaxCustomStatusBytes, fails the orchestration when the turn ends.
func (c *OrchestrationContext) SetCustomStatus(v any) {
	payload, err := EncodePayload(v)
	if err != nil {
		c.t.end(fmt.Errorf("set custom status: %w", err))
		return
	}
	c.t.setCustomStatus(&payload)
}

// ClearCustomStatus removes the instance's custom status.
func (c *OrchestrationContext) ClearCustomStatus() { c.t.setCustomStatus(nil) }

// CustomStatus decodes the custom status last set (by this execution, or
// carried from the one before a ContinueAsNew) into out, and reports whether
// there is one.
func (c *OrchestrationContext) CustomStatus(out any) (bool, error) {
	if c.t.customStatus == nil {
		return false, nil
	}
	return true, DecodePayload(*c.t.customStatus, out)
}

func (t *turn) setCustomStatus(v *string) {
	if !t.replaying && !sameValue(v, t.customStatus) {
		t.customStatusChanged = true
	}
	t.customStatus = v
}

func sameValue(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// Go runs fn as another coroutine of this orchestration and returns a future
// for its result (fn's value, encoded as JSON, or its error). Use it instead
// of the go statement, which would break deterministic replay. fn gets a
// context of its own: cancelling the returned future (or losing a Select)
// cancels the futures fn waits for and makes its context's Err non-nil; the
// future resolves when fn returns.
func (c *OrchestrationContext) Go(fn func(ctx *OrchestrationContext) (any, error)) *Future {
	return c.goRaw("ctx.Go", func(ctx *OrchestrationContext) (string, error) {
		v, err := fn(ctx)
		if err != nil {
			return "", err
		}
		return EncodePayload(v)
	})
}

// goRaw runs fn as a coroutine in a child scope; its result is already a payload.
func (c *OrchestrationContext) goRaw(label string, fn func(ctx *OrchestrationContext) (string, error)) *Future {
	c.t.sched.caller()
	if c.scope.err != nil {
		return c.failed(c.scope.err)
	}
	child := &scope{}
	c.scope.children = append(c.scope.children, child)
	f := newFuture(c.t)
	f.cancel = child.cancel
	c.scope.track(f)
	cctx := &OrchestrationContext{t: c.t, scope: child}
	c.t.sched.spawn(label+" #"+strconv.Itoa(len(c.t.sched.cos)), func() {
		out, err := fn(cctx)
		f.resolve(out, err)
	})
	return f
}

// Select blocks until at least one future is done and returns the index of the
// one that completed first in history order; the same on every replay. The
// others are cancelled (see Future.Cancel): a losing timer is deleted, a
// losing activity or child stopped, a losing WaitForEvent will not take a
// later event. Use WaitAny to keep them.
func (c *OrchestrationContext) Select(futures ...*Future) int {
	best := c.WaitAny(futures...)
	for i, f := range futures {
		if i != best && f != futures[best] {
			f.cancelWith("lost a Select")
		}
	}
	return best
}

// WaitAny is Select without cancelling the others: they stay pending, and a
// pending WaitForEvent keeps its place in line for the next event.
func (c *OrchestrationContext) WaitAny(futures ...*Future) int {
	if len(futures) == 0 {
		panic("duroxide: Select needs at least one future")
	}
	if firstDone(futures) < 0 {
		c.t.sched.park(futures, 1)
	}
	return firstDone(futures)
}

// firstDone is the index of the future that resolved first, or -1.
func firstDone(futures []*Future) int {
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
	pending := 0
	for _, f := range futures {
		if !f.done {
			pending++
		}
	}
	if pending > 0 {
		c.t.sched.park(futures, pending)
	}
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
