package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// turnInput is one turn of one execution, as the dispatcher prepared it.
type turnInput struct {
	instance    string
	executionID int64
	// history is the execution's history; empty for a new execution, which
	// begins from start (a StartOrchestration or ContinueAsNew message).
	history      []provider.Event
	start        *provider.WorkItem
	messages     []provider.WorkItem
	customStatus *string
	now          time.Time
}

type parentRef struct {
	instance    string
	executionID int64
	id          int64
}

// turn is the replay engine's state for one turn. runTurn replays the history
// event by event, letting the orchestration run until every coroutine blocks
// after each one, checks each decision against the history, then applies the
// new messages the same way and turns the new decisions into an ack.
type turn struct {
	reg         *Registry
	instance    string
	executionID int64
	name        string
	version     string
	parent      parentRef
	now         time.Time
	logger      *slog.Logger

	sched     *scheduler
	ctx       *OrchestrationContext
	main      *coroutine
	mainOut   string
	mainErr   error
	panicked  bool
	replaying bool
	curTime   time.Time
	resolved  int
	actionSeq int
	guidSeq   int

	pending       []*action
	byID          map[int64]*action
	subscriptions map[string][]*Future
	inbox         map[string][]string
	// eventKeys are the idempotency keys of the external events in history.
	eventKeys map[string]bool

	customStatus    *string
	customStatusSet bool

	// What the turn commits.
	nextID      int64
	firstTurn   bool
	finished    bool
	status      provider.ExecutionStatus
	output      string
	delta       []provider.Event
	workerItems []provider.WorkItem
	orchItems   []provider.WorkItem
	cancelled   []provider.ActivityRef
}

// runTurn computes the ack of one turn. It fails only when the turn cannot be
// computed: nondeterminism, an unregistered orchestration, a malformed history.
// The orchestration's own failures are part of a successful ack.
func runTurn(reg *Registry, in turnInput, logger *slog.Logger) (provider.OrchestrationAck, error) {
	t := &turn{
		reg: reg, instance: in.instance, executionID: in.executionID, now: in.now,
		sched: newScheduler(), byID: map[int64]*action{}, subscriptions: map[string][]*Future{},
		inbox: map[string][]string{}, nextID: int64(len(in.history)) + 1,
	}
	t.ctx = &OrchestrationContext{t: t}
	t.logger = slog.New(replaySafeHandler{inner: logger.Handler(), replaying: func() bool { return t.replaying }}).
		With("instance", in.instance, "execution", in.executionID)
	defer t.sched.abort()

	var err error
	if len(in.history) == 0 {
		err = t.startExecution(in.start)
	} else {
		err = t.replay(in.history)
	}
	if err == nil {
		err = t.apply(in.messages)
	}
	if err != nil {
		return provider.OrchestrationAck{}, err
	}
	return t.ack(in), nil
}

func (t *turn) mainDone() bool { return t.panicked || (t.main != nil && t.main.done) }

func (t *turn) startMain(fn OrchestrationFunc, input string) {
	t.main = t.sched.spawn(func() {
		t.mainOut, t.mainErr = fn(t.ctx, input)
	})
}

// startExecution begins a new execution from its StartOrchestration or
// ContinueAsNew message.
func (t *turn) startExecution(start *provider.WorkItem) error {
	if start == nil {
		return fmt.Errorf("instance %q: new execution %d has no start message", t.instance, t.executionID)
	}
	fn, version, err := t.reg.orchestration(start.Name, start.Version)
	if err != nil {
		return err
	}
	t.name, t.version, t.firstTurn = start.Name, version, true
	t.parent = parentRef{start.ParentInstance, start.ParentExecutionID, start.ParentID}
	t.curTime = t.now
	t.appendEvent(provider.Event{Kind: provider.EventOrchestrationStarted, Name: start.Name, Version: version,
		Input: start.Input, ParentInstance: start.ParentInstance, ParentExecutionID: start.ParentExecutionID,
		ParentID: start.ParentID, ExecutionID: t.executionID})
	t.startMain(fn, start.Input)
	t.run()
	return nil
}

// replay re-runs the orchestration against its history, checking each
// recorded decision and delivering each recorded completion in order.
func (t *turn) replay(history []provider.Event) error {
	started := history[0]
	if started.Kind != provider.EventOrchestrationStarted {
		return fmt.Errorf("instance %q execution %d: history starts with %s, not OrchestrationStarted", t.instance, t.executionID, started.Kind)
	}
	fn, _, err := t.reg.orchestration(started.Name, started.Version)
	if err != nil {
		return err
	}
	t.name, t.version = started.Name, started.Version
	t.parent = parentRef{started.ParentInstance, started.ParentExecutionID, started.ParentID}
	t.replaying = true
	t.curTime = time.UnixMilli(started.Time)
	t.startMain(fn, started.Input)
	t.run()
	for _, ev := range history[1:] {
		t.curTime = time.UnixMilli(ev.Time)
		if err := t.replayEvent(ev); err != nil {
			return err
		}
	}
	if len(t.pending) > 0 {
		return t.nondeterminism(t.nextID, "no further decisions", t.pending[0].describe())
	}
	return nil
}

func (t *turn) replayEvent(ev provider.Event) error {
	if ev.Kind == provider.EventExternalRaised {
		t.rememberEventKey(ev.Key)
	}
	if t.mainDone() {
		if isTerminalEvent(ev.Kind) {
			t.finished = true
			return nil
		}
		return t.nondeterminism(ev.ID, describeEvent(ev), "the orchestration returned")
	}
	switch {
	case isSchedulingEvent(ev.Kind):
		return t.matchDecision(ev)
	case isTerminalEvent(ev.Kind):
		return t.nondeterminism(ev.ID, string(ev.Kind), "the orchestration still running")
	}
	if len(t.pending) > 0 {
		return t.nondeterminism(ev.ID, describeEvent(ev), t.pending[0].describe())
	}
	if ev.Kind == provider.EventExternalRaised {
		t.deliverEvent(ev.Name, ev.Input)
		t.run()
		return nil
	}
	a := t.byID[ev.SourceID]
	if a == nil {
		return t.nondeterminism(ev.ID, fmt.Sprintf("%s answering event %d", ev.Kind, ev.SourceID), "no such decision")
	}
	t.complete(a, ev.Kind, ev.Output, ev.Error)
	t.run()
	return nil
}

func (t *turn) matchDecision(ev provider.Event) error {
	if len(t.pending) == 0 {
		return t.nondeterminism(ev.ID, describeEvent(ev), "no decision (the code is waiting)")
	}
	a := t.pending[0]
	if !a.matches(ev) {
		return t.nondeterminism(ev.ID, describeEvent(ev), a.describe())
	}
	t.pending = t.pending[1:]
	a.id = ev.ID
	t.byID[ev.ID] = a
	return nil
}

func (t *turn) nondeterminism(eventID int64, expected, actual string) error {
	return &NondeterminismError{Instance: t.instance, ExecutionID: t.executionID, EventID: eventID, Expected: expected, Actual: actual}
}

// apply processes the new messages in order, each followed by a run of the
// orchestration; the turn ends early once the orchestration finishes.
func (t *turn) apply(messages []provider.WorkItem) error {
	t.replaying = false
	t.curTime = t.now
	if t.mainDone() && !t.finished {
		t.finish()
	}
	for _, m := range messages {
		if t.finished {
			break
		}
		switch m.Kind {
		case provider.WorkStartOrchestration, provider.WorkContinueAsNew:
			// This execution's own start, or a repeated start of a running instance.
		case provider.WorkExternalRaised:
			if t.seenEventKey(m.Key) {
				t.logger.Debug("dropping repeated event", "name", m.Name, "key", m.Key)
				continue
			}
			t.rememberEventKey(m.Key)
			t.appendEvent(provider.Event{Kind: provider.EventExternalRaised, Name: m.Name, Input: m.Input, Key: m.Key})
			t.deliverEvent(m.Name, m.Input)
			t.run()
		case provider.WorkCancelInstance:
			t.terminate(m.Reason)
		default:
			t.applyCompletion(m)
		}
	}
	return nil
}

func (t *turn) seenEventKey(key string) bool { return key != "" && t.eventKeys[key] }

func (t *turn) rememberEventKey(key string) {
	if key == "" {
		return
	}
	if t.eventKeys == nil {
		t.eventKeys = map[string]bool{}
	}
	t.eventKeys[key] = true
}

func (t *turn) applyCompletion(m provider.WorkItem) {
	evKind, answers, ok := completionKind(m.Kind)
	a := t.byID[m.ID]
	if !ok || a == nil || a.kind != answers || a.future.done {
		// A duplicate (an activity that ran twice) or a message for a decision
		// this execution never made: the first result stands.
		t.logger.Debug("dropping message", "kind", m.Kind, "id", m.ID)
		return
	}
	t.appendEvent(provider.Event{Kind: evKind, SourceID: m.ID, Output: m.Result, Error: m.Error})
	t.complete(a, evKind, m.Result, m.Error)
	t.run()
}

// complete resolves a decision's future from its completion event.
func (t *turn) complete(a *action, kind provider.EventKind, output string, details *provider.ErrorDetails) {
	switch kind {
	case provider.EventActivityFailed, provider.EventSubOrchestrationFailed:
		task := "activity"
		if kind == provider.EventSubOrchestrationFailed {
			task = "sub-orchestration"
		}
		te := &TaskError{Task: task, Name: a.name, Class: ErrorApplication, Message: "unknown failure"}
		if details != nil {
			te.Class, te.Message = details.Class, details.Message
		}
		a.future.resolve("", te)
	default:
		a.future.resolve(output, nil)
	}
}

// run lets the orchestration run until it blocks; when not replaying, its new
// decisions are recorded and a returned orchestration is finished.
func (t *turn) run() {
	if err := t.sched.runUntilBlocked(); err != nil {
		t.panicked, t.mainErr = true, err
	}
	if t.replaying {
		return
	}
	t.recordDecisions()
	if t.mainDone() && !t.finished {
		t.finish()
	}
}

func (t *turn) issue(a *action) *action {
	t.actionSeq++
	a.future = newFuture(t)
	t.pending = append(t.pending, a)
	return a
}

func (t *turn) subscribe(name string, f *Future) {
	if queued := t.inbox[name]; len(queued) > 0 {
		t.inbox[name] = queued[1:]
		f.resolve(queued[0], nil)
		return
	}
	t.subscriptions[name] = append(t.subscriptions[name], f)
}

func (t *turn) deliverEvent(name, data string) {
	if waiting := t.subscriptions[name]; len(waiting) > 0 {
		t.subscriptions[name] = waiting[1:]
		waiting[0].resolve(data, nil)
		return
	}
	t.inbox[name] = append(t.inbox[name], data)
}

func (t *turn) appendEvent(ev provider.Event) int64 {
	ev.ID = t.nextID
	ev.Time = t.now.UnixMilli()
	t.nextID++
	t.delta = append(t.delta, ev)
	return ev.ID
}

// recordDecisions turns new decisions into history events and work items.
func (t *turn) recordDecisions() {
	for _, a := range t.pending {
		a.id = t.appendEvent(a.event(0, 0))
		t.byID[a.id] = a
		switch a.kind {
		case provider.EventActivityScheduled:
			t.workerItems = append(t.workerItems, provider.WorkItem{Kind: provider.WorkActivityExecute,
				Instance: t.instance, ExecutionID: t.executionID, ID: a.id, Name: a.name, Input: a.input})
		case provider.EventTimerCreated:
			t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkTimerFired,
				Instance: t.instance, ExecutionID: t.executionID, ID: a.id, FireAt: a.fireAt})
		case provider.EventSubOrchestrationScheduled:
			t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkStartOrchestration,
				Instance: a.instance, Name: a.name, Version: a.version, Input: a.input, ExecutionID: 1,
				ParentInstance: t.instance, ParentExecutionID: t.executionID, ParentID: a.id})
		case provider.EventOrchestrationChained:
			t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkStartOrchestration,
				Instance: a.instance, Name: a.name, Input: a.input, ExecutionID: 1})
		}
	}
	t.pending = nil
}

// cancelActivity removes an abandoned attempt's work item in this turn's ack.
func (t *turn) cancelActivity(a *action) {
	if t.replaying || a.id == 0 || a.cancelled {
		return
	}
	a.cancelled = true
	t.cancelled = append(t.cancelled, provider.ActivityRef{Instance: t.instance, ExecutionID: t.executionID, ActivityID: a.id})
}

// finish records how the orchestration ended.
func (t *turn) finish() {
	t.finished = true
	t.cancelOutstanding("instance " + t.instance + " finished")
	var can *continueAsNew
	switch {
	case errors.As(t.mainErr, &can):
		t.appendEvent(provider.Event{Kind: provider.EventOrchestrationContinuedAsNew, Input: can.input})
		t.status, t.output = provider.StatusContinuedAsNew, can.input
		t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkContinueAsNew, Instance: t.instance,
			Name: t.name, Version: can.version, Input: can.input, ExecutionID: t.executionID + 1,
			ParentInstance: t.parent.instance, ParentExecutionID: t.parent.executionID, ParentID: t.parent.id})
	case t.mainErr != nil:
		d := errorDetails(t.mainErr)
		t.appendEvent(provider.Event{Kind: provider.EventOrchestrationFailed, Error: d})
		t.status, t.output = provider.StatusFailed, encodeFailure(d.Class, d.Message)
		t.notifyParent(provider.WorkSubOrchFailed, "", d)
	default:
		t.appendEvent(provider.Event{Kind: provider.EventOrchestrationCompleted, Output: t.mainOut})
		t.status, t.output = provider.StatusCompleted, t.mainOut
		t.notifyParent(provider.WorkSubOrchCompleted, t.mainOut, nil)
	}
}

// terminate ends the execution on request, cascading to its children.
func (t *turn) terminate(reason string) {
	if t.finished {
		return
	}
	t.finished = true
	t.cancelOutstanding("parent instance " + t.instance + " terminated: " + reason)
	msg := "terminated: " + reason
	t.appendEvent(provider.Event{Kind: provider.EventOrchestrationTerminated, Reason: reason})
	t.status, t.output = provider.StatusTerminated, encodeFailure(ErrorApplication, msg)
	t.notifyParent(provider.WorkSubOrchFailed, "", &provider.ErrorDetails{Class: ErrorApplication, Message: msg})
}

// cancelOutstanding cancels the activities nobody will wait for any more and
// terminates children that are still running.
func (t *turn) cancelOutstanding(reason string) {
	ids := make([]int64, 0, len(t.byID))
	for id := range t.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		a := t.byID[id]
		if a.future.done || a.cancelled {
			continue
		}
		switch a.kind {
		case provider.EventActivityScheduled:
			t.cancelled = append(t.cancelled, provider.ActivityRef{Instance: t.instance, ExecutionID: t.executionID, ActivityID: id})
		case provider.EventSubOrchestrationScheduled:
			t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkCancelInstance, Instance: a.instance, Reason: reason})
		}
	}
}

func (t *turn) notifyParent(kind provider.WorkItemKind, result string, d *provider.ErrorDetails) {
	if t.parent.instance == "" {
		return
	}
	t.orchItems = append(t.orchItems, provider.WorkItem{Kind: kind, Instance: t.parent.instance,
		ExecutionID: t.parent.executionID, ID: t.parent.id, Result: result, Error: d})
}

func (t *turn) ack(in turnInput) provider.OrchestrationAck {
	ack := provider.OrchestrationAck{
		ExecutionID: t.executionID, HistoryDelta: t.delta, WorkerItems: t.workerItems,
		OrchestratorItems: t.orchItems, CancelledActivities: t.cancelled,
		Metadata: provider.ExecutionMetadata{Status: t.status, Output: t.output},
	}
	if t.firstTurn {
		ack.Metadata.OrchestrationName, ack.Metadata.OrchestrationVersion = t.name, t.version
		ack.Metadata.ParentInstance = t.parent.instance
	}
	if t.customStatusSet && !sameValue(t.customStatus, in.customStatus) {
		if t.customStatus == nil {
			ack.Metadata.CustomStatus = &provider.CustomStatusUpdate{Clear: true}
		} else {
			ack.Metadata.CustomStatus = &provider.CustomStatusUpdate{Value: *t.customStatus}
		}
	}
	return ack
}

func sameValue(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
