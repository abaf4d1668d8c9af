package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// DefaultStepTimeout is how long orchestration code may run without yielding
// when the runtime's options do not say.
const DefaultStepTimeout = time.Second

// TurnInput is one turn of one execution, as the dispatcher prepared it.
type TurnInput struct {
	instance    string
	executionID int64
	// history is the execution's history; empty for a new execution, which
	// begins from start (a StartOrchestration or ContinueAsNew message).
	history []provider.Event
	start   *provider.WorkItem
	// rewoundFrom is, for a rewind, the failed execution whose events
	// history is: replayed as history, written as this execution's first.
	rewoundFrom int64
	// messages are the turn's other messages, in order (a new execution's
	// carried messages first).
	messages     []provider.WorkItem
	customStatus *string
	// now is the turn's clock, in whole milliseconds like the history's, so
	// ctx.Now is the same on the first run and on replay.
	now time.Time
	// StepTimeout bounds how long orchestration code may run without yielding.
	StepTimeout time.Duration
	// Replies are answers the turn must send whatever happens (sub-orchestration
	// starts refused because the instance exists).
	Replies []provider.WorkItem
	// Local runs WithLocal activities inside the turn; nil queues them for
	// workers like any other.
	Local *LocalRunner
	// Schedule sees each new decision that sends work elsewhere (nil: none).
	Schedule ScheduleHook
}

type parentRef struct {
	instance    string
	executionID int64
	id          int64
}

// turn is the replay engine's state for one turn. runTurn replays the history
// event by event, letting the orchestration run until every coroutine blocks
// after each one, checks each decision against the history, then applies the
// new messages the same way and turns the new decisions into an ack. Beside
// the execution's identity it holds three parts: the code as replay drives
// it (replayState), what reaches the code (turnInbox), and what the turn
// commits (ackBuilder).
type turn struct {
	reg         *Registry
	instance    string
	executionID int64
	name        string
	version     string
	owner       string // who started the instance, carried over continue-as-new
	headers     map[string]string
	schedule    ScheduleHook
	parent      parentRef
	now         time.Time
	logger      *slog.Logger
	local       *LocalRunner

	replayState
	turnInbox
	ackBuilder
}

// replayState is the execution's code as the turn drives it: its
// coroutines, where replay is, and the counters replay must reproduce.
type replayState struct {
	sched     *scheduler
	ctx       *OrchestrationContext
	root      *scope
	main      *coroutine
	mainOut   string
	mainErr   error
	ended     bool // the execution ends with mainErr though main has not returned
	replaying bool
	curTime   time.Time
	resolved  int
	actionSeq int
	guidSeq   int
	// instanceRead is set once the code derives anything from the instance
	// ID, so Replay can tell whether a missing ID explains a mismatch.
	instanceRead bool
	// fatal stops the turn without an ack (a blocked coroutine).
	fatal error
	// rewoundFrom is the failed execution this one was rewound from (its
	// start records it); seed, in the rewind's own turn, the events of it
	// this execution starts from, written as its first.
	rewoundFrom int64
	seed        []provider.Event
	// endImposed: the history being replayed ended with a Terminated or
	// imposed failure that Replay removed.
	endImposed bool
	// localQueue are the WithLocal activities waiting to run in the turn;
	// localRuns counts the waves run.
	localQueue []*action
	localRuns  int
}

// turnInbox routes what reaches the code: results to the actions that wait
// for them, and external events to the waits subscribed to their names, or
// to the inbox until a wait takes them.
type turnInbox struct {
	pending       []*action
	byID          map[int64]*action
	subscriptions map[string][]*Future
	inbox         []inboxEvent
	eventSeq      int
	// taken are the waits that took an event, for giveBackUnread.
	taken []*Future
	// eventKeys are the idempotency keys of the external events in history.
	eventKeys map[string]bool
}

// ackBuilder is what the turn commits, built as the code runs.
type ackBuilder struct {
	customStatus *string
	// customStatusChanged is set when live code changed the custom status
	// during the turn (even back to its first value: readers see a new version).
	customStatusChanged bool
	// values are the instance's durable values (values.go); live code
	// changed the keys of valuesChanged, or replaced them all.
	values         map[string]string
	valuesChanged  map[string]bool
	valuesReplaced bool

	nextID          int64
	firstTurn       bool
	finished        bool
	status          provider.ExecutionStatus
	output          string
	delta           []provider.Event
	workerItems     []provider.WorkItem
	orchItems       []provider.WorkItem
	cancelled       []provider.ActivityRef
	cancelledTimers []provider.TimerRef
	continued       *provider.WorkItem
	leftover        []provider.WorkItem
}

// inboxEvent is an external event received before any wait took it.
type inboxEvent struct {
	name, data, key string
	// seq is the event's place in arrival order.
	seq int
}

// runTurn is RunTurn without the quiet waits.
func runTurn(reg *Registry, in TurnInput, logger *slog.Logger) (provider.OrchestrationAck, error) {
	ack, _, err := RunTurn(reg, in, logger)
	return ack, err
}

// RunTurn computes the ack of one turn, and which activity results would
// leave the execution's code blocked once the turn has committed (quiet.go).
// It fails only when the turn cannot be computed: nondeterminism, an
// unregistered orchestration, a malformed history, code blocked past its
// step deadline. The orchestration's own failures are part of a successful
// ack.
func RunTurn(reg *Registry, in TurnInput, logger *slog.Logger) (provider.OrchestrationAck, *QuietWaits, error) {
	t := newTurn(reg, in, logger)
	defer t.sched.teardown()
	if term := FirstOfKind(in.messages, provider.WorkCancelInstance); term != nil {
		// A Terminate wins over everything else in the batch, and needs neither
		// the code nor a replay: a broken orchestration can still be stopped.
		t.terminateFromHistory(in, term.Reason)
		return t.ack(in), nil, nil
	}
	var err error
	switch {
	case in.rewoundFrom != 0:
		err = t.rewind(in.history)
	case len(in.history) == 0:
		err = t.startExecution(in.start)
	default:
		err = t.replay(in.history)
	}
	if err == nil {
		t.apply(in.messages)
		err = t.fatal
	}
	if err != nil {
		return provider.OrchestrationAck{}, nil, err
	}
	if events := t.nextID - 1; events > MaxHistoryEvents {
		return failedOverHistoryLimit(reg, in, logger, events), nil, nil
	}
	t.enforceLimits()
	return t.ack(in), t.quietWaitsOf(), nil
}

// failedOverHistoryLimit is the ack of a turn whose events would take the
// history past MaxHistoryEvents: none of them is stored; the execution fails
// from the history it had.
func failedOverHistoryLimit(reg *Registry, in TurnInput, logger *slog.Logger, events int64) provider.OrchestrationAck {
	t := newTurn(reg, in, logger)
	defer t.sched.teardown()
	t.failFromHistory(in, &LimitError{What: "history", Size: int(events), Limit: MaxHistoryEvents,
		Hint: "use ContinueAsNew to start a fresh history"})
	return t.ack(in)
}

func newTurn(reg *Registry, in TurnInput, logger *slog.Logger) *turn {
	t := &turn{
		reg: reg, instance: in.instance, executionID: in.executionID, now: in.now, local: in.Local, schedule: in.Schedule,
		replayState: replayState{sched: newScheduler(in.StepTimeout)},
		turnInbox:   turnInbox{byID: map[int64]*action{}, subscriptions: map[string][]*Future{}},
		ackBuilder:  ackBuilder{nextID: int64(len(in.history)) + 1, customStatus: in.customStatus},
	}
	t.root = &scope{}
	t.startValues(nil)
	t.sched.verifyCaller.Store(true)
	t.ctx = &OrchestrationContext{t: t, scope: t.root}
	t.logger = slog.New(replaySafeHandler{inner: logger.Handler(), replaying: func() bool { return t.replaying }}).
		With("instance", in.instance, "execution", in.executionID)
	return t
}

func (t *turn) mainDone() bool { return t.ended || (t.main != nil && t.main.done) }

func (t *turn) startMain(fn OrchestrationFunc, input string) {
	t.main = t.sched.spawn("main", func() {
		out, err := fn(t.ctx, input)
		if !t.ended {
			t.mainOut, t.mainErr = out, err
		}
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
	t.recordStart(start, version)
	t.receiveCarried(start.Carry)
	t.startMain(fn, start.Input)
	t.run()
	return nil
}

// receiveCarried records and delivers, before the code starts, the events
// and cancellation the previous execution received but did not consume, so
// they are in this execution's history even if its code never waits for them.
func (t *turn) receiveCarried(carry []provider.WorkItem) {
	for _, m := range carry {
		switch m.Kind {
		case provider.WorkExternalRaised:
			if t.seenEventKey(m.Key) {
				continue
			}
			t.appendEvent(provider.Event{Kind: provider.EventExternalRaised, Name: m.Name, Input: m.Input, Key: m.Key, Carried: true})
		case provider.WorkCancelRequested:
			t.appendEvent(provider.Event{Kind: provider.EventOrchestrationCancelRequested, Reason: m.Reason, Carried: true})
		default:
			continue
		}
		t.receiveCarriedEvent(t.delta[len(t.delta)-1])
	}
}

// receiveCarriedEvent applies a carried event, on the first run or on replay.
func (t *turn) receiveCarriedEvent(ev provider.Event) {
	if ev.Kind == provider.EventOrchestrationCancelRequested {
		t.root.cancel("orchestration cancelled: " + ev.Reason)
		return
	}
	t.rememberEventKey(ev.Key)
	t.deliverEvent(ev.Name, ev.Input, ev.Key)
}

func (t *turn) recordStart(start *provider.WorkItem, version string) {
	t.name, t.version, t.firstTurn, t.owner, t.headers = start.Name, version, true, start.Owner, start.Headers
	t.parent = parentRef{start.ParentInstance, start.ParentExecutionID, start.ParentID}
	t.curTime = t.now
	t.customStatus = start.CustomStatus
	t.startValues(start.Values)
	t.appendEvent(provider.Event{Kind: provider.EventOrchestrationStarted, Name: start.Name, Version: version,
		Input: start.Input, ParentInstance: start.ParentInstance, ParentExecutionID: start.ParentExecutionID,
		ParentID: start.ParentID, ExecutionID: t.executionID, CustomStatus: start.CustomStatus, Owner: start.Owner,
		Headers: start.Headers, Values: start.Values})
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
	t.name, t.version, t.owner, t.rewoundFrom = started.Name, started.Version, started.Owner, started.RewoundFrom
	t.headers = started.Headers
	t.parent = parentRef{started.ParentInstance, started.ParentExecutionID, started.ParentID}
	t.customStatus = started.CustomStatus
	t.startValues(started.Values)
	t.replaying = true
	t.sched.verifyCaller.Store(false)
	t.curTime = time.UnixMilli(started.Time)
	rest := history[1:]
	for len(rest) > 0 && rest[0].Carried {
		t.receiveCarriedEvent(rest[0])
		rest = rest[1:]
	}
	t.startMain(fn, started.Input)
	t.run()
	endAt := endCancellationsFrom(rest, t.endImposed)
	for i, ev := range rest {
		t.curTime = time.UnixMilli(ev.Time)
		if (i >= endAt || t.mainDone()) && t.isEndCancellation(ev) {
			a := t.byID[ev.SourceID]
			if a == nil || !awaited(a) {
				return t.nondeterminism(ev.ID, describeEvent(ev), "no outstanding decision of that ID")
			}
			a.cancelledAtEnd = true
			continue
		}
		if err := t.replayEvent(ev); err != nil {
			return err
		}
		if t.fatal != nil {
			return t.fatal
		}
	}
	if len(t.pending) > 0 && t.seed == nil {
		return t.nondeterminism(t.nextID, "no further decisions", t.pending[0].describe())
	}
	return nil
}

// rewind starts a new execution from events of a failed one (a prefix that
// ends where every decision in it was answered): the code replays them,
// and what it decides after them is new. The events are written as the new
// execution's first; the custom status becomes what they left.
func (t *turn) rewind(seed []provider.Event) error {
	t.seed = seed
	if err := t.replay(seed); err != nil {
		return err
	}
	t.firstTurn, t.customStatusChanged, t.valuesReplaced = true, true, true
	t.replaying = false
	t.sched.verifyCaller.Store(true)
	t.curTime = t.now
	t.recordDecisions()
	return nil
}

// endCancellationsFrom returns where the CancelRequested events that end an
// ended history begin: the run of them just before its end event, or at its
// end when the caller removed an imposed end (Replay). Past the last index
// when the history has not ended.
func endCancellationsFrom(rest []provider.Event, endImposed bool) int {
	n := len(rest)
	switch {
	case n > 0 && rest[n-1].Kind.EndsExecution():
		n--
	case !endImposed:
		return len(rest)
	}
	i := n
	for i > 0 && rest[i-1].Kind == provider.EventCancelRequested {
		i--
	}
	return i
}

// isEndCancellation reports whether ev, in the run of cancellations an
// ending execution records (cancelOutstanding) or past the code's return, is
// one of those rather than the code's own cancellation: the code has no
// cancellation of it pending.
func (t *turn) isEndCancellation(ev provider.Event) bool {
	if ev.Kind != provider.EventCancelRequested {
		return false
	}
	return len(t.pending) == 0 || !t.pending[0].matches(ev)
}

func (t *turn) replayEvent(ev provider.Event) error {
	if isValueEvent(ev.Kind) {
		return nil // the code sets its values again as it replays
	}
	if ev.Kind == provider.EventExternalRaised {
		t.rememberEventKey(ev.Key)
	}
	if isDecisionEvent(ev.Kind) {
		// Decisions made just before the code returned come before its end.
		return t.matchDecision(ev)
	}
	if t.mainDone() {
		if ev.Kind.EndsExecution() {
			t.finished = true
			return nil
		}
		return t.nondeterminism(ev.ID, describeEvent(ev), "the orchestration returned")
	}
	if ev.Kind.EndsExecution() {
		return t.nondeterminism(ev.ID, string(ev.Kind), "the orchestration still running")
	}
	if len(t.pending) > 0 {
		return t.nondeterminism(ev.ID, describeEvent(ev), t.pending[0].describe())
	}
	switch ev.Kind {
	case provider.EventExternalRaised:
		t.deliverEvent(ev.Name, ev.Input, ev.Key)
	case provider.EventOrchestrationCancelRequested:
		t.root.cancel("orchestration cancelled: " + ev.Reason)
	default:
		a := t.byID[ev.SourceID]
		if a == nil {
			return t.nondeterminism(ev.ID, fmt.Sprintf("%s answering event %d", ev.Kind, ev.SourceID), "no such decision")
		}
		t.complete(a, ev.Kind, ev.Output, ev.Error)
	}
	t.run()
	return nil
}

func (t *turn) matchDecision(ev provider.Event) error {
	if len(t.pending) == 0 {
		if t.mainDone() {
			return t.nondeterminism(ev.ID, describeEvent(ev), "the orchestration returned")
		}
		return t.nondeterminism(ev.ID, describeEvent(ev), "no decision (the code is waiting)")
	}
	a := t.pending[0]
	if !a.matches(ev) && !t.matchesRewound(a, ev) {
		return t.nondeterminism(ev.ID, describeEvent(ev), a.describe())
	}
	t.pending = t.pending[1:]
	a.id = ev.ID
	t.byID[ev.ID] = a
	return nil
}

// matchesRewound matches, in a rewound execution (on every replay), a
// sub-orchestration an earlier execution started, before a cut, under its
// own execution's generated ID: the decision takes the recorded child.
func (t *turn) matchesRewound(a *action, ev provider.Event) bool {
	if t.rewoundFrom == 0 || (a.kind != provider.EventSubOrchestrationScheduled && a.kind != provider.EventOrchestrationChained) ||
		a.kind != ev.Kind || a.name != ev.Name {
		return false
	}
	prefix := t.instance + "::"
	exec, seq, ok := strings.Cut(strings.TrimPrefix(ev.Instance, prefix), "::")
	was, err := strconv.ParseInt(exec, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(ev.Instance, prefix) || was < 1 || was >= t.executionID ||
		a.instance != fmt.Sprintf("%s%d::%s", prefix, t.executionID, seq) {
		return false
	}
	a.instance = ev.Instance
	return true
}

func (t *turn) nondeterminism(eventID int64, expected, actual string) error {
	return &NondeterminismError{Instance: t.instance, ExecutionID: t.executionID, EventID: eventID, Expected: expected, Actual: actual}
}

// apply processes the new messages in order, each followed by a run of the
// orchestration. Once the execution has ended, the rest are left over: carried
// into the next execution after a continue-as-new, refused or dropped otherwise.
func (t *turn) apply(messages []provider.WorkItem) {
	t.replaying = false
	t.sched.verifyCaller.Store(true)
	t.curTime = t.now
	if t.mainDone() && !t.finished {
		t.finish()
	}
	for i, m := range messages {
		if t.fatal != nil {
			return
		}
		if t.finished {
			t.leave(messages[i:])
			return
		}
		t.applyMessage(m)
	}
}

func (t *turn) applyMessage(m provider.WorkItem) {
	switch m.Kind {
	case provider.WorkStartOrchestration, provider.WorkContinueAsNew:
		t.refuseStart(m, t.parent)
	case provider.WorkExternalRaised:
		if t.seenEventKey(m.Key) {
			t.logger.Debug("dropping repeated event", "name", m.Name, "key", m.Key)
			return
		}
		t.rememberEventKey(m.Key)
		t.appendEvent(provider.Event{Kind: provider.EventExternalRaised, Name: m.Name, Input: m.Input, Key: m.Key})
		t.deliverEvent(m.Name, m.Input, m.Key)
		t.run()
	case provider.WorkCancelRequested:
		t.appendEvent(provider.Event{Kind: provider.EventOrchestrationCancelRequested, Reason: m.Reason})
		t.root.cancel("orchestration cancelled: " + m.Reason)
		t.run()
	case provider.WorkCancelInstance:
		t.terminate(m.Reason)
	default:
		t.applyCompletion(m)
	}
}

// leave handles messages that arrive after the execution ended in this turn.
func (t *turn) leave(messages []provider.WorkItem) {
	for _, m := range messages {
		switch m.Kind {
		case provider.WorkStartOrchestration, provider.WorkContinueAsNew:
			t.refuseStart(m, t.parent)
		case provider.WorkExternalRaised, provider.WorkCancelRequested, provider.WorkCancelInstance:
			if t.continued != nil {
				t.leftover = append(t.leftover, m)
			} else {
				t.logger.Info("message for a finished instance dropped", "kind", m.Kind, "name", m.Name)
			}
		}
	}
}

// refuseStart answers a sub-orchestration start that names this existing
// instance: the parent's await fails, unless it is a repeated delivery of
// this instance's own start (same parent and call), which is ignored.
func (t *turn) refuseStart(m provider.WorkItem, own parentRef) {
	if reply := refusal(m, t.instance, own); reply != nil {
		t.logger.Warn("sub-orchestration start refused: the instance already exists", "parent", m.ParentInstance)
		t.orchItems = append(t.orchItems, *reply)
	}
}

func refusal(m provider.WorkItem, instance string, own parentRef) *provider.WorkItem {
	if m.Kind != provider.WorkStartOrchestration || m.ParentInstance == "" {
		return nil // a client's start is idempotent on the instance ID
	}
	if (parentRef{m.ParentInstance, m.ParentExecutionID, m.ParentID}) == own {
		return nil
	}
	return &provider.WorkItem{Kind: provider.WorkSubOrchFailed, Instance: m.ParentInstance,
		ExecutionID: m.ParentExecutionID, ID: m.ParentID, Error: &provider.ErrorDetails{
			Class: ErrorApplication, Kind: FailureAlreadyExists,
			Message: fmt.Sprintf("instance %q already exists; sub-orchestration %q was not started", instance, m.Name)}}
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
	if t.recordCompletion(m) {
		t.run()
	}
}

// recordCompletion records a completion message and resolves its decision's
// future; false when the message answers nothing waiting.
func (t *turn) recordCompletion(m provider.WorkItem) bool {
	evKind, answers, ok := completionKind(m.Kind)
	a := t.byID[m.ID]
	if !ok || a == nil || a.kind != answers || a.future.done {
		// A duplicate (an activity that ran twice), an answer to cancelled
		// work, or a message for a decision this execution never made: the
		// first result stands.
		t.logger.Debug("dropping message", "kind", m.Kind, "id", m.ID)
		return false
	}
	t.appendEvent(provider.Event{Kind: evKind, SourceID: m.ID, Output: m.Result, Error: m.Error})
	t.complete(a, evKind, m.Result, m.Error)
	return true
}

// complete resolves a decision's future from its completion event.
func (t *turn) complete(a *action, kind provider.EventKind, output string, details *provider.ErrorDetails) {
	switch kind {
	case provider.EventActivityFailed:
		a.future.resolve("", taskError("activity", a.name, details))
	case provider.EventSubOrchestrationFailed:
		a.future.resolve("", taskError("sub-orchestration", a.name, details))
	default:
		a.future.resolve(output, nil)
	}
}

// run lets the orchestration run until it blocks; when not replaying, its new
// decisions are recorded, its local activities run, and a returned
// orchestration is finished.
func (t *turn) run() {
	t.step()
	t.runLocalActivities()
}

// step is one run of the orchestration until it blocks, without running
// local activities.
func (t *turn) step() {
	if t.fatal != nil {
		return
	}
	err := t.sched.runUntilBlocked()
	var blocked *BlockedError
	switch {
	case errors.As(err, &blocked):
		blocked.Instance = t.instance
		t.fatal = err
		return
	case err != nil:
		t.mainErr, t.ended = err, true
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
	t.sched.caller()
	t.actionSeq++
	a.future = newFuture(t)
	a.future.cancel = func(reason string) { t.cancelDecision(a, reason) }
	t.pending = append(t.pending, a)
	return a
}

// cancelDecision gives up on a decision: the future fails at once, and the
// cancellation is itself a decision, recorded and checked on replay. Its side
// effects (queue deletions, the child's termination) are part of this ack.
func (t *turn) cancelDecision(a *action, reason string) {
	if a.future.done {
		return
	}
	if a.kind == provider.EventExternalSubscribed {
		t.unsubscribe(a.name, a.future)
	}
	t.pending = append(t.pending, &action{kind: provider.EventCancelRequested, target: a, reason: reason, future: newFuture(t)})
	a.future.resolve("", &CanceledError{Reason: reason})
}

func (t *turn) subscribe(name string, f *Future) {
	for i, ev := range t.inbox {
		if ev.name == name {
			t.inbox = append(t.inbox[:i], t.inbox[i+1:]...)
			t.take(f, ev)
			return
		}
	}
	t.subscriptions[name] = append(t.subscriptions[name], f)
}

// take resolves a wait with an event, remembering which, so that a wait
// cancelled before its result is read gives the event back (giveBack).
func (t *turn) take(f *Future, ev inboxEvent) {
	f.event = &ev
	t.taken = append(t.taken, f)
	f.resolve(ev.data, nil)
}

// giveBack returns the event of a wait whose result was never read to the
// inbox, in arrival order: an event is consumed only by code that reads it.
func (t *turn) giveBack(f *Future) bool {
	if f.event == nil || f.observed {
		return false
	}
	ev := *f.event
	f.event = nil
	if waiting := t.subscriptions[ev.name]; len(waiting) > 0 {
		t.subscriptions[ev.name] = waiting[1:]
		t.take(waiting[0], ev)
		return true
	}
	i, _ := slices.BinarySearchFunc(t.inbox, ev.seq, func(e inboxEvent, seq int) int { return e.seq - seq })
	t.inbox = slices.Insert(t.inbox, i, ev)
	return true
}

// giveBackUnread returns the events of every wait whose result was never
// read, before a continue-as-new carries the inbox.
func (t *turn) giveBackUnread() {
	for _, f := range t.taken {
		t.giveBack(f)
	}
}

func (t *turn) unsubscribe(name string, f *Future) {
	waiting := t.subscriptions[name]
	for i, w := range waiting {
		if w == f {
			t.subscriptions[name] = append(waiting[:i:i], waiting[i+1:]...)
			return
		}
	}
}

func (t *turn) deliverEvent(name, data, key string) {
	t.eventSeq++
	ev := inboxEvent{name: name, data: data, key: key, seq: t.eventSeq}
	if waiting := t.subscriptions[name]; len(waiting) > 0 {
		t.subscriptions[name] = waiting[1:]
		t.take(waiting[0], ev)
		return
	}
	if len(t.inbox) >= MaxInboxEvents {
		t.end(&LimitError{What: "inbox", Size: len(t.inbox) + 1, Limit: MaxInboxEvents,
			Hint: fmt.Sprintf("event %q arrived with %d events waiting that no WaitForEvent consumed", name, len(t.inbox))})
		return
	}
	t.inbox = append(t.inbox, ev)
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
		if kind, ok := scheduleKindOf(a.kind); ok {
			a.headers = t.scheduled(kind, a.instance, a.name, a.attempt)
		}
		a.id = t.appendEvent(a.event())
		t.byID[a.id] = a
		switch a.kind {
		case provider.EventActivityScheduled:
			if t.runsLocally(a) {
				t.queueLocal(a)
				continue
			}
			t.workerItems = append(t.workerItems, provider.WorkItem{Kind: provider.WorkActivityExecute,
				Instance: t.instance, ExecutionID: t.executionID, ID: a.id, Name: a.name, Input: a.input,
				Headers: a.headers, Time: t.now.UnixMilli(), Tag: a.tag, Session: a.session})
		case provider.EventTimerCreated:
			t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkTimerFired,
				Instance: t.instance, ExecutionID: t.executionID, ID: a.id, FireAt: a.fireAt})
		case provider.EventSubOrchestrationScheduled:
			t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkStartOrchestration,
				Instance: a.instance, Name: a.name, Version: a.version, Input: a.input, ExecutionID: 1,
				ParentInstance: t.instance, ParentExecutionID: t.executionID, ParentID: a.id, Headers: a.headers})
		case provider.EventOrchestrationChained:
			t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkStartOrchestration,
				Instance: a.instance, Name: a.name, Input: a.input, ExecutionID: 1, Headers: a.headers})
		case provider.EventCancelRequested:
			t.stop(a.target, a.reason)
		}
	}
	t.pending = nil
}

// stop removes what a cancelled or abandoned decision left queued: the
// activity's work item, the timer's message, the child instance.
func (t *turn) stop(a *action, reason string) {
	switch a.kind {
	case provider.EventActivityScheduled:
		if a.inline {
			return // it runs, or ran, in this turn: no work item
		}
		t.cancelled = append(t.cancelled, provider.ActivityRef{Instance: t.instance, ExecutionID: t.executionID, ActivityID: a.id})
	case provider.EventTimerCreated:
		t.cancelledTimers = append(t.cancelledTimers, provider.TimerRef{ExecutionID: t.executionID, TimerID: a.id})
	case provider.EventSubOrchestrationScheduled:
		t.orchItems = append(t.orchItems, provider.WorkItem{Kind: provider.WorkCancelInstance, Instance: a.instance, Reason: reason})
	}
}

// end makes the execution fail with err although its code has not returned
// (a limit was exceeded); the engine finishes it when the code next yields.
func (t *turn) end(err error) {
	if t.finished || t.ended {
		return
	}
	t.mainErr, t.ended = err, true
}

// finish records how the orchestration ended.
func (t *turn) finish() {
	t.finished = true
	var can *continueAsNew
	if errors.As(t.mainErr, &can) {
		t.giveBackUnread()
	}
	if errors.As(t.mainErr, &can) && len(t.inbox) > MaxCarryForwardEvents {
		t.mainErr = &LimitError{What: "carry-forward", Size: len(t.inbox), Limit: MaxCarryForwardEvents,
			Hint: "continue-as-new would carry more unconsumed external events than allowed; consume them with WaitForEvent first"}
	}
	if t.customStatus != nil && len(*t.customStatus) > MaxCustomStatusBytes {
		t.mainErr = &LimitError{What: "custom status", Size: len(*t.customStatus), Limit: MaxCustomStatusBytes}
		t.customStatusChanged = false // keep what is stored
	}
	if t.mainErr == nil && len(t.mainOut) > MaxPayloadBytes {
		t.mainErr = &LimitError{What: "payload", Size: len(t.mainOut), Limit: MaxPayloadBytes, Hint: "orchestration output"}
	}
	switch {
	case errors.As(t.mainErr, &can):
		t.cancelOutstanding("instance " + t.instance + " continued as new")
		t.appendEvent(provider.Event{Kind: provider.EventOrchestrationContinuedAsNew, Input: can.input})
		t.status, t.output = provider.StatusContinuedAsNew, can.input
		t.continued = &provider.WorkItem{Kind: provider.WorkContinueAsNew, Instance: t.instance,
			Name: t.name, Version: can.version, Input: can.input, ExecutionID: t.executionID + 1,
			ParentInstance: t.parent.instance, ParentExecutionID: t.parent.executionID, ParentID: t.parent.id,
			CustomStatus: t.customStatus, Owner: t.owner, Headers: t.scheduled(ScheduleContinueAsNew, t.instance, t.name, 0),
			Values: carriedValues(t.values)}
	case t.mainErr != nil:
		t.cancelOutstanding("instance " + t.instance + " failed")
		d := DetailsOf(t.mainErr)
		t.appendEvent(provider.Event{Kind: provider.EventOrchestrationFailed, Error: d})
		t.status, t.output = provider.StatusFailed, EncodeFailure(d)
		t.notifyParent(provider.WorkSubOrchFailed, "", d)
	default:
		t.cancelOutstanding("instance " + t.instance + " completed")
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
	t.appendEvent(provider.Event{Kind: provider.EventOrchestrationTerminated, Reason: reason})
	d := &provider.ErrorDetails{Class: ErrorApplication, Kind: FailureTerminated, Reason: reason, Message: "terminated: " + reason}
	t.status, t.output = provider.StatusTerminated, EncodeFailure(d)
	t.notifyParent(provider.WorkSubOrchFailed, "", d)
}

// terminateFromHistory terminates without running the code.
func (t *turn) terminateFromHistory(in TurnInput, reason string) {
	t.endFromHistory(in, func() { t.terminate(reason) })
}

// failFromHistory fails the execution with err without running the code or
// recording anything the turn decided: for a turn that would pass a limit.
func (t *turn) failFromHistory(in TurnInput, err error) {
	t.endFromHistory(in, func() {
		t.mainErr = err
		t.finish()
	})
}

// endFromHistory ends the execution with end, without running the code: the
// history alone says what is outstanding (scheduled, neither answered nor
// cancelled). The turn's sub-orchestration starts naming this instance are
// refused; its other messages are dropped.
func (t *turn) endFromHistory(in TurnInput, end func()) {
	t.replaying = false
	t.curTime = t.now
	if len(in.history) == 0 {
		_, version, err := t.reg.orchestration(in.start.Name, in.start.Version)
		if err != nil {
			version = in.start.Version // terminating code this process lacks is fine
		}
		t.recordStart(in.start, version)
	} else {
		started := in.history[0]
		t.name, t.version = started.Name, started.Version
		t.parent = parentRef{started.ParentInstance, started.ParentExecutionID, started.ParentID}
		for _, a := range outstandingDecisions(in.history) {
			t.byID[a.id] = a
		}
	}
	for _, m := range in.messages {
		if m.Kind == provider.WorkStartOrchestration {
			t.refuseStart(m, t.parent)
		}
	}
	end()
}

// outstandingDecisions lists the scheduled work a history has not seen
// answered or cancelled.
func outstandingDecisions(history []provider.Event) []*action {
	open := map[int64]*action{}
	var order []int64
	for _, ev := range history {
		switch {
		case ev.Kind == provider.EventActivityScheduled || ev.Kind == provider.EventTimerCreated ||
			ev.Kind == provider.EventSubOrchestrationScheduled:
			open[ev.ID] = &action{kind: ev.Kind, name: ev.Name, instance: ev.Instance, id: ev.ID}
			order = append(order, ev.ID)
		case ev.SourceID != 0:
			delete(open, ev.SourceID)
		}
	}
	var out []*action
	for _, id := range order {
		if a, ok := open[id]; ok {
			a.future = &Future{}
			out = append(out, a)
		}
	}
	return out
}

// cancelOutstanding stops what the ended execution no longer waits for:
// activities are removed, timers deleted, children terminated. Each is
// recorded as a CancelRequested event, as a Select loser is, so the history
// says what became of it.
func (t *turn) cancelOutstanding(reason string) {
	ids := make([]int64, 0, len(t.byID))
	for id := range t.byID {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if a := t.byID[id]; awaited(a) {
			t.appendEvent(provider.Event{Kind: provider.EventCancelRequested, SourceID: id, Reason: reason})
			t.stop(a, reason)
		}
	}
}

// awaited reports whether a decision still waits for an answer: scheduled
// work or a wait whose future is not done.
func awaited(a *action) bool {
	switch a.kind {
	case provider.EventActivityScheduled, provider.EventTimerCreated, provider.EventSubOrchestrationScheduled,
		provider.EventExternalSubscribed:
		return !a.future.done && !a.cancelledAtEnd
	}
	return false
}

func (t *turn) notifyParent(kind provider.WorkItemKind, result string, d *provider.ErrorDetails) {
	if t.parent.instance == "" {
		return
	}
	t.orchItems = append(t.orchItems, provider.WorkItem{Kind: kind, Instance: t.parent.instance,
		ExecutionID: t.parent.executionID, ID: t.parent.id, Result: result, Error: d})
}

// enforceLimits fails the execution, before anything is committed, when the
// turn would store more than the limits allow.
func (t *turn) enforceLimits() {
	if t.finished {
		return
	}
	if t.customStatus != nil && len(*t.customStatus) > MaxCustomStatusBytes {
		t.end(&LimitError{What: "custom status", Size: len(*t.customStatus), Limit: MaxCustomStatusBytes})
	}
	if t.ended {
		t.finish()
	}
}

func (t *turn) ack(in TurnInput) provider.OrchestrationAck {
	orchItems := append(in.Replies, t.orchItems...)
	if t.continued != nil {
		t.continued.Carry = t.carried()
		orchItems = append(orchItems, *t.continued)
	}
	delta := t.delta
	if t.seed != nil {
		delta = append(slices.Clone(t.seed), t.delta...)
	}
	ack := provider.OrchestrationAck{
		ExecutionID: t.executionID, HistoryDelta: delta, WorkerItems: t.workerItems,
		OrchestratorItems: orchItems, CancelledActivities: t.cancelled, CancelledTimers: t.cancelledTimers,
		Metadata: provider.ExecutionMetadata{Status: t.status, Output: t.output},
		Values:   t.valuesUpdate(),
	}
	dropScheduledAndCancelled(&ack)
	if t.firstTurn {
		ack.Metadata.OrchestrationName, ack.Metadata.OrchestrationVersion = t.name, t.version
		ack.Metadata.ParentInstance = t.parent.instance
	}
	if t.customStatusChanged {
		if t.customStatus == nil {
			ack.Metadata.CustomStatus = &provider.CustomStatusUpdate{Clear: true}
		} else {
			ack.Metadata.CustomStatus = &provider.CustomStatusUpdate{Value: *t.customStatus}
		}
	}
	return ack
}

// dropScheduledAndCancelled leaves out the activities and timers a turn both
// scheduled and cancelled (work nobody awaits when the execution ends in
// the same turn): queuing them only for the cancellation to delete them, or
// for a worker to skip them, would be wasted work.
func dropScheduledAndCancelled(ack *provider.OrchestrationAck) {
	type ref struct {
		exec, id int64
	}
	activities, timers := map[ref]bool{}, map[ref]bool{}
	for _, a := range ack.CancelledActivities {
		activities[ref{a.ExecutionID, a.ActivityID}] = true
	}
	for _, c := range ack.CancelledTimers {
		timers[ref{c.ExecutionID, c.TimerID}] = true
	}
	if len(activities) == 0 && len(timers) == 0 {
		return
	}
	var droppedActivities, droppedTimers = map[ref]bool{}, map[ref]bool{}
	ack.WorkerItems = slices.DeleteFunc(ack.WorkerItems, func(w provider.WorkItem) bool {
		r := ref{w.ExecutionID, w.ID}
		droppedActivities[r] = activities[r]
		return activities[r]
	})
	ack.OrchestratorItems = slices.DeleteFunc(ack.OrchestratorItems, func(o provider.WorkItem) bool {
		r := ref{o.ExecutionID, o.ID}
		if o.Kind != provider.WorkTimerFired || !timers[r] {
			return false
		}
		droppedTimers[r] = true
		return true
	})
	ack.CancelledActivities = slices.DeleteFunc(ack.CancelledActivities, func(a provider.ActivityRef) bool {
		return droppedActivities[ref{a.ExecutionID, a.ActivityID}]
	})
	ack.CancelledTimers = slices.DeleteFunc(ack.CancelledTimers, func(c provider.TimerRef) bool {
		return droppedTimers[ref{c.ExecutionID, c.TimerID}]
	})
}

// carried lists what a continue-as-new hands to the next execution: events
// recorded but never consumed, then messages fetched after the end, in order.
func (t *turn) carried() []provider.WorkItem {
	var out []provider.WorkItem
	for _, ev := range t.inbox {
		out = append(out, provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: t.instance,
			Name: ev.name, Input: ev.data, Key: ev.key})
	}
	return append(out, t.leftover...)
}

// instanceID is the instance ID as the code sees it, noted as read.
func (t *turn) instanceID() string {
	t.instanceRead = true
	return t.instance
}

func guidName(instance string, execution int64, seq int) string {
	return instance + "/" + strconv.FormatInt(execution, 10) + "/" + strconv.Itoa(seq)
}
