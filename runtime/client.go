package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime/internal/dispatch"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// Client starts, signals, inspects and manages orchestration instances. It
// needs no running Runtime in the same process; it only talks to the store.
type Client struct {
	p provider.Provider
	// eager, when set, runs first turns in this runtime (Runtime.Client).
	eager        *dispatch.Dispatcher
	interceptors []Interceptor
}

// ClientOption configures NewClient.
type ClientOption func(*Client)

// ClientInterceptors wraps the client's Start, RaiseEvent, Cancel and
// Terminate in interceptors (InterceptClient), the first outermost.
func ClientInterceptors(is ...Interceptor) ClientOption {
	return func(c *Client) { c.interceptors = append(c.interceptors, is...) }
}

// NewClient returns a client for p.
func NewClient(p provider.Provider, opts ...ClientOption) *Client {
	c := &Client{p: p}
	for _, o := range opts {
		o(c)
	}
	return c
}

// intercepted runs a client call through the client's interceptors.
func (c *Client) intercepted(ctx context.Context, call *ClientCall, fn func(context.Context) error) error {
	if len(c.interceptors) == 0 {
		return fn(ctx)
	}
	return dispatch.InterceptClient(c.interceptors, ctx, call, fn)
}

// StartOption configures Start. Options are opaque: they set what Start
// sends, never the message's kind or target.
type StartOption func(*startOptions)

type startOptions struct {
	version string
	owner   string
	reuse   IDReusePolicy
	events  []startEvent
	headers map[string]string
}

type startEvent struct {
	name string
	data any
}

// IDReusePolicy says what Start does when the instance ID is taken: an
// instance with it exists, or a start of it is queued. See the constants.
type IDReusePolicy = provider.IDReusePolicy

const (
	// IDReuseFail, the default, refuses the start with
	// provider.ErrAlreadyExists.
	IDReuseFail = provider.IDReuseFail
	// IDReuseAllowFinished replaces a root instance that has finished
	// (Completed, Failed or Terminated), sub-orchestrations included: the old
	// instance and its history are deleted and the start queued, in one
	// transaction. A running one is refused.
	IDReuseAllowFinished = provider.IDReuseAllowFinished
	// IDReuseTerminateRunning replaces the root instance whatever its state:
	// a running one is deleted with its sub-orchestrations (their turns and
	// activities in flight fail to commit, as after Delete with force) and
	// records no Terminated status, since its history goes with it.
	IDReuseTerminateRunning = provider.IDReuseTerminateRunning
)

// StartVersion pins the instance to an orchestration version (default: the
// latest registered where the first turn runs).
func StartVersion(v string) StartOption { return func(o *startOptions) { o.version = v } }

// StartOwner records who starts the instance (for example "Orchestration
// ns/name (uid …)") in its OrchestrationStarted event, carried over
// continue-as-new; Client.Owner reads it back. The owner also names the
// start: a Start with the owner the instance (or its queued start) recorded
// is taken for a retry of that start and returns nil, changing nothing,
// whatever the ID-reuse policy. A caller that may retry a start after a
// timeout gives it an owner unique to that start.
func StartOwner(owner string) StartOption { return func(o *startOptions) { o.owner = owner } }

// StartHeader records a header with the start (Interceptor): the
// instance's turns see it in TurnInfo.Headers, and the work they schedule
// carries it on unless an interceptor changes it.
func StartHeader(key, value string) StartOption {
	return func(o *startOptions) {
		if o.headers == nil {
			o.headers = map[string]string{}
		}
		o.headers[key] = value
	}
}

// StartIDReuse sets what Start does when the instance ID is taken (default
// IDReuseFail). Replacing never applies to a sub-orchestration (its parent
// waits for it): that start is refused.
func StartIDReuse(p IDReusePolicy) StartOption { return func(o *startOptions) { o.reuse = p } }

// StartWithEvent raises an external event with the start, so the first turn
// receives it (signal-with-start): the start and its events are queued in
// one transaction, or, when the start is refused, none of them. An instance
// that already exists does not receive the event: use RaiseEvent for it.
func StartWithEvent(name string, data any) StartOption {
	return func(o *startOptions) { o.events = append(o.events, startEvent{name, data}) }
}

// Start starts an instance of orchestration with input. The store decides, in
// the transaction that queues the start, whether the instance ID is free:
// when an instance with it exists (running or finished) or a start of it is
// queued, Start fails with an error that wraps a
// *provider.AlreadyExistsError (errors.Is provider.ErrAlreadyExists) naming
// the instance and its status, e.g. `start "hello-1": instance already exists
// (Completed)`, unless the start is a retry of that one (StartOwner) or its
// ID-reuse policy lets it replace the instance (StartIDReuse).
func (c *Client) Start(ctx context.Context, instanceID, orchestration string, input any, opts ...StartOption) error {
	return c.start(ctx, instanceID, orchestration, input, opts, c.queueStart)
}

// StartTx is Start inside tx, the caller's own transaction on the store's
// database (postgres.InTx, sqlite.InTx): the instance starts when, and
// only if, tx commits, so a business row and the orchestration that acts
// on it are written together. The ID is checked against what tx sees;
// the first turn runs in a dispatcher after the commit.
func (c *Client) StartTx(ctx context.Context, tx provider.Tx, instanceID, orchestration string, input any, opts ...StartOption) error {
	return c.start(ctx, instanceID, orchestration, input, opts,
		func(ctx context.Context, item provider.WorkItem, events []provider.WorkItem, reuse IDReusePolicy) error {
			return c.p.StartInTx(ctx, tx, provider.StartRequest{Start: item, Events: events, Reuse: reuse})
		})
}

// start builds a start and hands it to queue, through the interceptors.
func (c *Client) start(ctx context.Context, instanceID, orchestration string, input any, opts []StartOption,
	queue func(context.Context, provider.WorkItem, []provider.WorkItem, IDReusePolicy) error) error {
	if instanceID == "" || orchestration == "" {
		return fmt.Errorf("start: instance ID and orchestration name are required")
	}
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
	if !o.reuse.Valid() {
		return fmt.Errorf("start %q: %w: unknown ID-reuse policy %q", instanceID, provider.ErrInvalidArgument, o.reuse)
	}
	payload, err := engine.EncodePayload(input)
	if err != nil {
		return fmt.Errorf("start %q: %w", instanceID, err)
	}
	events, err := startEvents(instanceID, o.events)
	if err != nil {
		return fmt.Errorf("start %q: %w", instanceID, err)
	}
	call := &ClientCall{Op: ClientStart, Instance: instanceID, Name: orchestration, Headers: o.headers}
	return c.intercepted(ctx, call, func(ctx context.Context) error {
		item := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: instanceID, Name: orchestration,
			Version: o.version, Input: payload, ExecutionID: 1, Owner: o.owner, Headers: nonEmpty(call.Headers)}
		if err := queue(ctx, item, events, o.reuse.OrDefault()); err != nil {
			return startError(instanceID, err)
		}
		return nil
	})
}

// nonEmpty is m, or nil when it has no entry (nothing to record).
func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// startEvents encodes a start's events as the messages queued after it.
func startEvents(instanceID string, events []startEvent) ([]provider.WorkItem, error) {
	items := make([]provider.WorkItem, 0, len(events))
	for _, ev := range events {
		payload, err := engine.EncodePayload(ev.data)
		if err != nil {
			return nil, fmt.Errorf("event %q: %w", ev.name, err)
		}
		items = append(items, provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: instanceID, Name: ev.name, Input: payload})
	}
	return items, nil
}

// startError names the start in err. A refusal is reported as the store
// described it, without the provider's own wrapping, which would name the
// operation and the instance a second time.
func startError(instanceID string, err error) error {
	var taken *provider.AlreadyExistsError
	if errors.As(err, &taken) {
		err = taken
	}
	return fmt.Errorf("start %q: %w", instanceID, err)
}

// queueStart queues a start, eagerly when the client may and the start
// carries no event (its events are queued with it, before the first turn).
func (c *Client) queueStart(ctx context.Context, item provider.WorkItem, events []provider.WorkItem, reuse IDReusePolicy) error {
	if c.eager != nil && len(events) == 0 {
		if done, err := c.eager.StartEagerly(ctx, item, reuse); done || err != nil {
			return err
		}
	}
	_, err := c.p.StartInstance(ctx, provider.StartRequest{Start: item, Events: events, Reuse: reuse})
	return err
}

// RaiseOption configures RaiseEvent.
type RaiseOption func(*raiseOptions)

type raiseOptions struct{ key string }

// EventKey makes the event idempotent: however often an event with this key is
// raised on an execution, its history records it once. A caller that cannot
// tell whether an earlier raise went through (a crash, a timeout) raises again
// with the same key.
func EventKey(key string) RaiseOption { return func(o *raiseOptions) { o.key = key } }

// RaiseEvent delivers an external event to an instance; WaitForEvent(name)
// receives data. It fails, queuing nothing, when the instance does not exist
// and is not being started (provider.ErrNotFound) or has finished
// (provider.ErrInstanceFinished): nobody would ever read the event. A keyed
// retry that gets ErrInstanceFinished may find its first raise in History.
func (c *Client) RaiseEvent(ctx context.Context, instanceID, name string, data any, opts ...RaiseOption) error {
	return c.raise(ctx, instanceID, name, data, opts, c.p.SendToInstance)
}

// RaiseEventTx is RaiseEvent inside tx, the caller's own transaction on the
// store's database (postgres.InTx, sqlite.InTx): the event is delivered
// when, and only if, tx commits. Whether the instance can receive it is
// checked against what tx sees.
func (c *Client) RaiseEventTx(ctx context.Context, tx provider.Tx, instanceID, name string, data any, opts ...RaiseOption) error {
	return c.raise(ctx, instanceID, name, data, opts, func(ctx context.Context, item provider.WorkItem) error {
		return c.p.SendInTx(ctx, tx, item)
	})
}

// raise builds an event and hands it to send, through the interceptors.
func (c *Client) raise(ctx context.Context, instanceID, name string, data any, opts []RaiseOption,
	send func(context.Context, provider.WorkItem) error) error {
	var o raiseOptions
	for _, opt := range opts {
		opt(&o)
	}
	payload, err := engine.EncodePayload(data)
	if err != nil {
		return fmt.Errorf("raise event %q on %q: %w", name, instanceID, err)
	}
	item := provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: instanceID, Name: name, Input: payload, Key: o.key}
	return c.intercepted(ctx, &ClientCall{Op: ClientRaise, Instance: instanceID, Name: name}, func(ctx context.Context) error {
		if err := send(ctx, item); err != nil {
			return fmt.Errorf("raise event %q on %q: %w", name, instanceID, err)
		}
		return nil
	})
}

// Terminate ends a running instance with reason. Its in-flight activities are
// cancelled and its sub-orchestrations terminated. It fails with
// provider.ErrNotFound for an unknown instance and provider.ErrInstanceFinished
// for one that has already ended.
func (c *Client) Terminate(ctx context.Context, instanceID, reason string) error {
	item := provider.WorkItem{Kind: provider.WorkCancelInstance, Instance: instanceID, Reason: reason}
	return c.intercepted(ctx, &ClientCall{Op: ClientTerminate, Instance: instanceID}, func(ctx context.Context) error {
		if err := c.p.SendToInstance(ctx, item); err != nil {
			return fmt.Errorf("terminate %q: %w", instanceID, err)
		}
		return nil
	})
}

// ErrTurnInProgress: a worker holds the instance for a turn; it will apply
// the terminate message itself.
var ErrTurnInProgress = errors.New("a worker holds the instance for a turn; it applies the terminate")

// TerminateNow terminates a running instance and its running descendants
// and records the end in the store at once, running the terminating turns in
// this process: for when no worker will (the pool's workers are gone). The
// turns need neither the orchestration code nor a replay. It fails like
// Terminate, with ErrTurnInProgress when a worker holds an instance (that
// worker applies the message).
func (c *Client) TerminateNow(ctx context.Context, instanceID, reason string) error {
	if err := c.Terminate(ctx, instanceID, reason); err != nil {
		return err
	}
	if err := c.runTerminateTurn(ctx, instanceID); err != nil {
		return err
	}
	return c.terminateChildrenNow(ctx, instanceID, 0)
}

// terminateChildrenNow runs the terminating turns the parent's turn asked of
// its running children, depth first.
func (c *Client) terminateChildrenNow(ctx context.Context, parent string, depth int) error {
	if depth >= maxTerminateDepth {
		return nil
	}
	children, err := c.p.ListChildren(ctx, provider.InstanceRequest{Instance: parent})
	if err != nil {
		return fmt.Errorf("list children of %q: %w", parent, err)
	}
	for _, child := range children {
		err := c.runTerminateTurn(ctx, child)
		if errors.Is(err, errNoTerminate) || errors.Is(err, ErrTurnInProgress) {
			continue // finished, not asked to terminate, or a worker has it
		}
		if err != nil {
			return err
		}
		if err := c.terminateChildrenNow(ctx, child, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// maxTerminateDepth bounds how deep TerminateNow follows sub-orchestrations.
const maxTerminateDepth = 32

var errNoTerminate = errors.New("no terminate message queued")

// runTerminateTurn locks the instance and, when its batch holds a terminate
// message, runs and commits that turn; other batches go back untouched.
func (c *Client) runTerminateTurn(ctx context.Context, instanceID string) error {
	item, err := provider.FetchOne(ctx, c.p, provider.FetchRequest{Instance: instanceID, LockFor: 30 * time.Second})
	if err != nil {
		return fmt.Errorf("terminate %q now: %w", instanceID, err)
	}
	if item == nil {
		return fmt.Errorf("terminate %q now: %w", instanceID, ErrTurnInProgress)
	}
	if engine.FirstOfKind(item.Messages, provider.WorkCancelInstance) == nil {
		_ = c.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true})
		return errNoTerminate
	}
	New(c.p, NewRegistry(), Options{}).d.RunItem(ctx, item)
	return nil
}

// Cancel asks a running instance to stop gracefully: the futures it waits
// for fail with a *CanceledError (errors.Is(err, ErrCanceled)), work it starts
// afterwards on its context fails the same way, and ctx.Err reports it, so
// the code can compensate (on ctx.WithoutCancel()) and return. An instance
// that returns the cancellation error ends Failed with Failure.Kind
// FailureCanceled. Terminate is the hard stop. Like Terminate, it fails for
// an unknown or finished instance.
func (c *Client) Cancel(ctx context.Context, instanceID, reason string) error {
	item := provider.WorkItem{Kind: provider.WorkCancelRequested, Instance: instanceID, Reason: reason}
	return c.intercepted(ctx, &ClientCall{Op: ClientCancel, Instance: instanceID}, func(ctx context.Context) error {
		if err := c.p.SendToInstance(ctx, item); err != nil {
			return fmt.Errorf("cancel %q: %w", instanceID, err)
		}
		return nil
	})
}

// Status returns an instance's state: StatusPending while its start is queued
// and no worker has run it yet, provider.ErrNotFound when there is no such
// instance and none is being started.
func (c *Client) Status(ctx context.Context, instanceID string) (*Status, error) {
	info, err := c.p.GetInstanceInfo(ctx, provider.InstanceRequest{Instance: instanceID})
	if errors.Is(err, provider.ErrNotFound) {
		var page provider.InstancePage
		page, err = c.p.ListInstances(ctx, provider.ListRequest{Instance: instanceID, Status: provider.StatusPending, Limit: 1})
		if err == nil && len(page.Instances) == 1 {
			return pendingStatus(page.Instances[0]), nil
		}
		if err == nil {
			// The start may have been consumed between the two reads, creating the instance.
			info, err = c.p.GetInstanceInfo(ctx, provider.InstanceRequest{Instance: instanceID})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("status of %q: %w", instanceID, err)
	}
	return engine.StatusFromInfo(info), nil
}

// pendingStatus is the status of a queued start: what its message says,
// since when it waits.
func pendingStatus(info provider.InstanceInfo) *Status {
	return &Status{Instance: info.Instance, Orchestration: info.OrchestrationName, Version: info.Version,
		Status: StatusPending, ParentInstance: info.ParentInstance, CreatedAt: info.CreatedAt, UpdatedAt: info.UpdatedAt}
}

// CustomStatus returns the custom status if its version moved past
// knownVersion; changed is false otherwise, at the cost of one cheap query.
func (c *Client) CustomStatus(ctx context.Context, instanceID string, knownVersion int64) (provider.CustomStatus, bool, error) {
	return c.p.GetCustomStatus(ctx, provider.CustomStatusRequest{Instance: instanceID, KnownVersion: knownVersion})
}

// Value decodes the durable value the instance holds under key (set by
// its code with OrchestrationContext.SetValue; as its last committed turn
// left it) into out, and reports whether it holds one. An unknown instance
// gets provider.ErrNotFound.
func (c *Client) Value(ctx context.Context, instanceID, key string, out any) (bool, error) {
	values, err := c.p.ReadValues(ctx, provider.ValuesRequest{Instance: instanceID, Keys: []string{key}})
	if err != nil {
		return false, fmt.Errorf("value %q of %q: %w", key, instanceID, err)
	}
	v, ok := values[key]
	if !ok {
		return false, nil
	}
	if err := engine.DecodePayload(v, out); err != nil {
		return true, fmt.Errorf("value %q of %q: %w", key, instanceID, err)
	}
	return true, nil
}

// Values returns every durable value of the instance as JSON, by key. An
// unknown instance gets provider.ErrNotFound.
func (c *Client) Values(ctx context.Context, instanceID string) (map[string]json.RawMessage, error) {
	values, err := c.p.ReadValues(ctx, provider.ValuesRequest{Instance: instanceID})
	if err != nil {
		return nil, fmt.Errorf("values of %q: %w", instanceID, err)
	}
	out := make(map[string]json.RawMessage, len(values))
	for k, v := range values {
		out[k] = json.RawMessage(v)
	}
	return out, nil
}

// Wait blocks until the instance finishes (Completed, Failed or Terminated)
// and returns its final status; ctx bounds the wait. An unknown instance, or
// one deleted while waited for, fails at once with provider.ErrNotFound. It is
// woken by the store's status changes, with a slow re-check as a fallback.
func (c *Client) Wait(ctx context.Context, instanceID string) (*Status, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := c.p.Watch(ctx)
	if err != nil {
		return nil, fmt.Errorf("wait for %q: %w", instanceID, err)
	}
	recheck := time.NewTicker(time.Second)
	defer recheck.Stop()
	for {
		s, err := c.Status(ctx, instanceID)
		if err != nil {
			return nil, fmt.Errorf("wait for %q: %w", instanceID, err)
		}
		if s.Finished() {
			return s, nil
		}
		if err := waitForChange(ctx, changes, recheck.C, instanceID); err != nil {
			return s, fmt.Errorf("wait for %q: %w", instanceID, err)
		}
	}
}

func waitForChange(ctx context.Context, changes <-chan provider.StatusChange, tick <-chan time.Time, instanceID string) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			return nil
		case ch, ok := <-changes:
			if !ok {
				return ctx.Err()
			}
			if ch.Instance == instanceID {
				return nil
			}
		}
	}
}

// Owner returns who started the instance (StartOwner), "" when nobody was
// recorded. It reads the current execution's history: a tool's call, not a
// hot path.
func (c *Client) Owner(ctx context.Context, instanceID string) (string, error) {
	history, err := c.History(ctx, instanceID)
	if err != nil {
		return "", err
	}
	if len(history) == 0 || history[0].Kind != provider.EventOrchestrationStarted {
		return "", nil
	}
	return history[0].Owner, nil
}

// History returns the current execution's history.
func (c *Client) History(ctx context.Context, instanceID string) ([]provider.Event, error) {
	return c.p.ReadHistory(ctx, provider.ExecutionRequest{Instance: instanceID})
}

// List returns one page of instances, newest first: req filters them (by
// status, including provider.StatusPending and provider.StatusStalled, by
// orchestration, ID prefix and creation time) and pages them (Limit, and
// After: the previous page's Next). An invalid request gets
// provider.ErrInvalidArgument.
func (c *Client) List(ctx context.Context, req provider.ListRequest) (provider.InstancePage, error) {
	return c.p.ListInstances(ctx, req)
}

// Delete removes a finished instance and its sub-orchestrations with all their
// history; force also removes running ones.
func (c *Client) Delete(ctx context.Context, instanceID string, force bool) (provider.DeleteResult, error) {
	return c.p.DeleteInstances(ctx, provider.DeleteRequest{Instances: []string{instanceID}, Force: force})
}

// Purge removes finished instances matching filter.
func (c *Client) Purge(ctx context.Context, filter provider.DeleteFilter) (provider.DeleteResult, error) {
	return c.p.DeleteInstancesBulk(ctx, filter)
}

// Prune removes old executions (left behind by ContinueAsNew) of an instance.
func (c *Client) Prune(ctx context.Context, instanceID string, opts provider.PruneOptions) (provider.PruneResult, error) {
	return c.p.PruneExecutions(ctx, provider.PruneRequest{Instance: instanceID, Options: opts})
}
