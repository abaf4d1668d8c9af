package engine

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// The randomized replay-determinism test: generated orchestration programs
// run against a simulated world that answers their work in random orders and
// batches; every prefix of every recorded history must replay to the same
// decisions, the instance must finish, and no delivered event may be lost.
//
//	go test ./runtime -run TestRandomizedDeterminism -determinism.cases=50000
//	go test ./runtime -run TestRandomizedDeterminism -determinism.seed=1234 -v
var (
	determinismCases = flag.Int("determinism.cases", 3000, "programs the randomized determinism test generates")
	determinismSeed  = flag.Uint64("determinism.seed", 0, "run only the program with this seed")
)

func TestRandomizedDeterminism(t *testing.T) {
	reg := registry(t, func(r *Registry) { RegisterOrchestration(r, "Prog", runProgram) })
	if *determinismSeed != 0 {
		checkProgram(t, reg, *determinismSeed)
		return
	}
	cases := *determinismCases
	if testing.Short() && cases > 300 {
		cases = 300 // the fast loop; make test runs them all
	}
	for seed := uint64(1); seed <= uint64(cases); seed++ {
		if !t.Run(fmt.Sprint(seed), func(t *testing.T) { checkProgram(t, reg, seed) }) {
			t.Fatalf("seed %d failed; rerun it alone with -determinism.seed=%d -v", seed, seed)
		}
	}
}

// checkProgram runs one generated program to its end in a random world and
// checks what it recorded.
func checkProgram(t *testing.T, reg *Registry, seed uint64) {
	w := newWorld(t, reg, seed)
	w.run()
	w.checkNothingLost()
	w.checkTurnsRerun()
	for exec, h := range w.histories {
		w.checkPrefixes(exec, h)
	}
}

// --- programs ---

type opKind int

const (
	opActivity opKind = iota
	opRetry
	opTimer
	opWait
	opChild
	opSelect
	opPar
	opCancel
	opNow
	opGUID
	opStatus
	opForget // started and never awaited: cancelled when the execution ends
	opLocal  // an activity run inside the turn (WithLocal); L3 has no code here and goes to a worker
	opKinds
)

type op struct {
	kind   opKind
	n      int
	arms   []op   // opSelect and opCancel: primitives to race or cancel
	blocks [][]op // opPar: blocks run as coroutines
}

type progInput struct {
	Seed uint64 `json:"seed"`
	Exec int    `json:"exec"`
	// Trace is what earlier executions saw.
	Trace []string `json:"trace,omitempty"`
}

// genOps generates a sequence of n operations; composite ones only above maxDepth.
func genOps(r *rand.Rand, depth, n int) []op {
	ops := make([]op, n)
	for i := range ops {
		ops[i] = genOp(r, depth)
	}
	return ops
}

func genOp(r *rand.Rand, depth int) op {
	k := opKind(r.IntN(int(opKinds)))
	if depth >= 2 && (k == opSelect || k == opPar) {
		k = opActivity
	}
	o := op{kind: k, n: r.IntN(4)}
	switch k {
	case opSelect:
		o.arms = []op{genPrimitive(r), genPrimitive(r)}
		if r.IntN(3) == 0 {
			o.arms = append(o.arms, genPrimitive(r))
		}
	case opCancel:
		o.arms = []op{genPrimitive(r)}
	case opForget:
		// Not a wait: a forgotten wait would take an event nobody reads,
		// which checkNothingLost could not tell from a lost one.
		for o.arms = []op{genPrimitive(r)}; o.arms[0].kind == opWait; {
			o.arms[0] = genPrimitive(r)
		}
	case opPar:
		for range 2 + r.IntN(2) {
			o.blocks = append(o.blocks, genOps(r, depth+1, 1+r.IntN(3)))
		}
	}
	return o
}

func genPrimitive(r *rand.Rand) op {
	kinds := []opKind{opActivity, opRetry, opTimer, opWait, opChild, opLocal}
	return op{kind: kinds[r.IntN(len(kinds))], n: r.IntN(4)}
}

// runProgram is the orchestration under test: it regenerates its program from
// the seed, runs it, and continues as new up to Seed%3 times.
func runProgram(ctx *OrchestrationContext, in progInput) (string, error) {
	r := rand.New(rand.NewPCG(in.Seed, uint64(in.Exec)))
	trace := append(in.Trace, runOps(ctx, genOps(r, 0, 2+r.IntN(6)))...)
	if in.Exec < int(in.Seed%3) {
		return "", ctx.ContinueAsNew(progInput{Seed: in.Seed, Exec: in.Exec + 1, Trace: trace})
	}
	return strings.Join(trace, " "), nil
}

func runOps(ctx *OrchestrationContext, ops []op) []string {
	var trace []string
	for _, o := range ops {
		trace = append(trace, runOp(ctx, o))
	}
	return trace
}

func runOp(ctx *OrchestrationContext, o op) string {
	switch o.kind {
	case opSelect:
		fs := make([]*Future, len(o.arms))
		for i, a := range o.arms {
			fs[i] = startPrimitive(ctx, a)
		}
		i := ctx.Select(fs...)
		return fmt.Sprintf("select%d:%s", i, outcome(Await[string](fs[i])))
	case opCancel:
		f := startPrimitive(ctx, o.arms[0])
		f.Cancel()
		return "cancel:" + outcome(Await[string](f))
	case opPar:
		fs := make([]*Future, len(o.blocks))
		for i, b := range o.blocks {
			fs[i] = ctx.Go(func(ctx *OrchestrationContext) (any, error) {
				return strings.Join(runOps(ctx, b), ","), nil
			})
		}
		var parts []string
		for i := len(fs) - 1; i >= 0; i-- { // joined out of start order
			parts = append(parts, outcome(Await[string](fs[i])))
		}
		return "par[" + strings.Join(parts, "|") + "]"
	case opForget:
		startPrimitive(ctx, o.arms[0])
		return "forget"
	case opNow:
		return fmt.Sprint("now", ctx.Now().UnixMilli())
	case opGUID:
		return "guid" + ctx.NewGUID()
	case opStatus:
		var prev int
		ok, err := ctx.CustomStatus(&prev)
		ctx.SetCustomStatus(prev + o.n + 1)
		return fmt.Sprintf("status%v:%d:%v", ok, prev, err)
	default:
		return outcome(Await[string](startPrimitive(ctx, o)))
	}
}

func startPrimitive(ctx *OrchestrationContext, o op) *Future {
	switch o.kind {
	case opActivity:
		return ctx.CallActivity(fmt.Sprintf("A%d", o.n), o.n)
	case opRetry:
		p := RetryPolicy{MaxAttempts: 3, Backoff: BackoffFixed}
		if o.n%2 == 0 {
			p.Timeout = time.Minute
		}
		opts := []ActivityOption{WithRetry(p)}
		if o.n == 3 {
			opts = append(opts, WithLocal())
		}
		return ctx.CallActivity(fmt.Sprintf("R%d", o.n), o.n, opts...)
	case opLocal:
		return ctx.CallActivity(fmt.Sprintf("L%d", o.n), o.n, WithLocal())
	case opTimer:
		return ctx.CreateTimer(time.Duration(o.n+1) * time.Second)
	case opWait:
		return ctx.WaitForEvent(fmt.Sprintf("E%d", o.n))
	case opChild:
		return ctx.CallSubOrchestration("Child", o.n)
	}
	panic(fmt.Sprintf("op %d is not a primitive", o.kind))
}

func outcome(v string, err error) string {
	if err != nil {
		return "err(" + err.Error() + ")"
	}
	return v
}

// --- the world ---

// world plays everything outside the orchestration: the queues, activity
// workers, children and clients raising events. Like a provider, it enqueues
// a turn's orchestrator messages with its ack and fetches everything queued
// for the instance at once; how many answers arrive between two fetches is
// random, and so is their order.
type world struct {
	t    *testing.T
	r    *rand.Rand
	s    *sim
	seed uint64
	// inflight are answers not yet queued: running activities and children,
	// timers not yet due, events not yet raised.
	inflight []pending
	queue    []provider.WorkItem
	// mustRecord are the events delivered to turns that did not end the
	// instance: each must be in some execution's history.
	mustRecord []string
	nextEvent  int
	eventName  map[string]string // raised value -> event name
	extras     int
	histories  map[int64][]provider.Event
	turns      int
	recorded   []recordedTurn
}

// recordedTurn is what a turn was given and what it acked.
type recordedTurn struct {
	item       provider.OrchestrationItem // History left out: a prefix of histories
	historyLen int
	now        time.Time
	ack        provider.OrchestrationAck
}

type pending struct {
	item  provider.WorkItem
	child string // the child instance whose answer this is
}

func newWorld(t *testing.T, reg *Registry, seed uint64) *world {
	w := &world{t: t, r: rand.New(rand.NewPCG(seed, 99)), s: newSim(t, reg), seed: seed,
		histories: map[int64][]provider.Event{}, eventName: map[string]string{}}
	w.queue = []provider.WorkItem{start("Prog", progInput{Seed: seed})}
	w.s.local = &LocalRunner{Has: func(name, _ string) bool { return name != "L3" }, Run: localAnswer}
	return w
}

// localAnswer runs a local activity of the world: its answer depends on the
// item only, so a rerun of the turn gets the same.
func localAnswer(it provider.WorkItem, _ time.Duration) (provider.WorkItem, error) {
	a := provider.WorkItem{Instance: it.Instance, ExecutionID: it.ExecutionID, ID: it.ID}
	if (it.ID+it.ExecutionID)%5 == 0 {
		a.Kind = provider.WorkActivityFailed
		a.Error = &provider.ErrorDetails{Class: ErrorApplication, Message: fmt.Sprintf("%s failed", it.Name)}
		return a, nil
	}
	a.Kind, a.Result = provider.WorkActivityCompleted, jsonString(fmt.Sprintf("%s@%d local", it.Name, it.ID))
	return a, nil
}

func (w *world) run() {
	const maxTurns = 400
	for w.turns = 0; w.turns < maxTurns; w.turns++ {
		w.deliverSome()
		if len(w.queue) == 0 {
			w.fail("stranded: the instance is %s with nothing queued or in flight", w.s.status)
		}
		batch := w.queue
		w.queue = nil
		rec := recordedTurn{item: provider.OrchestrationItem{Instance: w.s.instance, Exists: w.s.exec > 0,
			ExecutionID: max(w.s.exec, 1), Status: w.s.status, Messages: batch, CustomStatus: w.s.custom},
			historyLen: len(w.s.history)}
		ack, err := w.s.turn(batch...)
		if err != nil {
			w.fail("turn %d with %s: %v", w.turns, describeBatch(batch), err)
		}
		rec.now, rec.ack = w.s.now, ack
		if *determinismSeed != 0 {
			w.t.Logf("turn %d: %s\n  -> exec %d %s %s", w.turns, describeBatch(batch), w.s.exec, w.s.status, describeEvents(ack.HistoryDelta))
		}
		w.recorded = append(w.recorded, rec)
		if w.s.exec > 0 {
			w.histories[w.s.exec] = slices.Clone(w.s.history)
		}
		ended := w.s.status == provider.StatusCompleted || w.s.status == provider.StatusFailed
		if !ended {
			for _, m := range batch {
				if m.Kind == provider.WorkExternalRaised {
					w.mustRecord = append(w.mustRecord, m.Input)
				}
			}
		}
		if ended {
			if w.s.status != provider.StatusCompleted {
				w.fail("the program failed: %s", ack.Metadata.Output)
			}
			return
		}
		w.apply(ack)
	}
	w.fail("still %s after %d turns", w.s.status, maxTurns)
}

// deliverSome queues a random number of in-flight answers, in random order.
func (w *world) deliverSome() {
	n := w.r.IntN(min(3, len(w.inflight)) + 1)
	if n == 0 && len(w.queue) == 0 && len(w.inflight) > 0 {
		n = 1
	}
	for range n {
		i := w.r.IntN(len(w.inflight))
		w.queue = append(w.queue, w.inflight[i].item)
		w.inflight = slices.Delete(w.inflight, i, i+1)
	}
}

// apply does what a provider and the rest of the system would do with an ack.
func (w *world) apply(ack provider.OrchestrationAck) {
	for _, it := range ack.WorkerItems {
		w.inflight = append(w.inflight, pending{item: w.activityAnswer(it)})
	}
	for _, it := range ack.OrchestratorItems {
		switch {
		case it.Kind == provider.WorkContinueAsNew:
			w.queue = append(w.queue, it)
		case it.Kind == provider.WorkTimerFired:
			w.inflight = append(w.inflight, pending{item: it})
		case it.Kind == provider.WorkStartOrchestration && it.ParentInstance == w.s.instance:
			w.inflight = append(w.inflight, pending{item: w.childAnswer(it), child: it.Instance})
		case it.Kind == provider.WorkCancelInstance:
			w.terminateChild(it.Instance)
		default:
			w.fail("unexpected orchestrator item %s for %s", it.Kind, it.Instance)
		}
	}
	for _, c := range ack.CancelledActivities {
		if w.r.IntN(2) == 0 { // not started yet: removed; else it still answers
			w.drop(func(it provider.WorkItem) bool {
				isActivity := it.Kind == provider.WorkActivityCompleted || it.Kind == provider.WorkActivityFailed
				return isActivity && it.ExecutionID == c.ExecutionID && it.ID == c.ActivityID
			})
		}
	}
	for _, c := range ack.CancelledTimers {
		isTimer := func(it provider.WorkItem) bool {
			return it.Kind == provider.WorkTimerFired && it.ExecutionID == c.ExecutionID && it.ID == c.TimerID
		}
		w.drop(isTimer)
		w.queue = slices.DeleteFunc(w.queue, isTimer)
	}
	for _, e := range ack.HistoryDelta {
		if e.Kind == provider.EventExternalSubscribed {
			w.inflight = append(w.inflight, pending{item: w.raise(e.Name)})
		}
	}
	if w.extras < 2 && w.r.IntN(20) == 0 { // an event nobody waits for (yet)
		w.extras++
		w.inflight = append(w.inflight, pending{item: w.raise(fmt.Sprintf("E%d", w.r.IntN(4)))})
	}
}

func (w *world) activityAnswer(it provider.WorkItem) provider.WorkItem {
	a := provider.WorkItem{Instance: it.Instance, ExecutionID: it.ExecutionID, ID: it.ID}
	if w.r.IntN(6) == 0 {
		a.Kind = provider.WorkActivityFailed
		a.Error = &provider.ErrorDetails{Class: ErrorApplication, Message: fmt.Sprintf("%s failed", it.Name)}
		return a
	}
	a.Kind, a.Result = provider.WorkActivityCompleted, jsonString(fmt.Sprintf("%s@%d", it.Name, it.ID))
	return a
}

func (w *world) childAnswer(it provider.WorkItem) provider.WorkItem {
	a := provider.WorkItem{Instance: it.ParentInstance, ExecutionID: it.ParentExecutionID, ID: it.ParentID}
	if w.r.IntN(6) == 0 {
		a.Kind = provider.WorkSubOrchFailed
		a.Error = &provider.ErrorDetails{Class: ErrorApplication, Message: it.Instance + " failed"}
		return a
	}
	a.Kind, a.Result = provider.WorkSubOrchCompleted, jsonString("child "+it.Instance)
	return a
}

// terminateChild turns a cancelled child's answer into the failure a
// terminated child reports (unless its answer is already queued).
func (w *world) terminateChild(instance string) {
	for i := range w.inflight {
		if p := &w.inflight[i]; p.child == instance {
			p.item.Kind, p.item.Result = provider.WorkSubOrchFailed, ""
			p.item.Error = &provider.ErrorDetails{Class: ErrorApplication, Kind: FailureTerminated, Message: "terminated"}
		}
	}
}

func (w *world) raise(name string) provider.WorkItem {
	w.nextEvent++
	value := fmt.Sprintf("ev%d", w.nextEvent)
	w.eventName[value] = name
	return provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: w.s.instance, Name: name, Input: jsonString(value)}
}

func (w *world) drop(match func(provider.WorkItem) bool) {
	w.inflight = slices.DeleteFunc(w.inflight, func(p pending) bool { return match(p.item) })
}

// checkNothingLost: every event delivered while the instance ran is in a
// history (consumed or not); no event is consumed twice; and waits consume
// the events of a name in the order they arrived, so the consumed ones are
// always the earliest (an event taken by a dead wait would leave a gap).
func (w *world) checkNothingLost() {
	recorded := map[string]bool{}
	arrived := map[string][]string{} // event name -> values in arrival order
	for exec := int64(1); exec <= w.s.exec; exec++ {
		for _, e := range w.histories[exec] {
			if e.Kind != provider.EventExternalRaised {
				continue
			}
			var v string
			_ = json.Unmarshal([]byte(e.Input), &v)
			if !recorded[v] {
				arrived[e.Name] = append(arrived[e.Name], v)
			}
			recorded[v] = true
		}
	}
	for _, ev := range w.mustRecord {
		var v string
		_ = json.Unmarshal([]byte(ev), &v)
		if !recorded[v] {
			w.fail("event %s was delivered but is in no history", v)
		}
	}
	last := w.histories[w.s.exec]
	out := last[len(last)-1].Output
	consumed := map[string]map[string]bool{} // event name -> values
	for _, v := range regexp.MustCompile(`ev\d+\b`).FindAllString(out, -1) {
		name := w.eventName[v]
		if consumed[name] == nil {
			consumed[name] = map[string]bool{}
		}
		if consumed[name][v] {
			w.fail("event %s consumed twice: %s", v, out)
		}
		consumed[name][v] = true
	}
	for name, got := range consumed {
		for _, v := range arrived[name][:min(len(got), len(arrived[name]))] {
			if !got[v] {
				w.fail("waits for %s consumed %v but not the earlier %s (arrival order %v): %s", name, slices.Sorted(maps.Keys(got)), v, arrived[name], out)
			}
		}
	}
}

// checkPrefixes replays every prefix of an execution's history. A prefix a
// store can hold (a turn boundary) replays without error or new decision. A
// prefix that cuts a turn short must make the code decide exactly what the
// history records next: the engine reports that decision as the one it did
// not expect at the end of the history, or, for the end of the execution,
// records the same terminal event.
func (w *world) checkPrefixes(exec int64, h []provider.Event) {
	endAt := endCancellationsFrom(h, false)
	for i := 1; i <= len(h); i++ {
		if h[i-1].Kind.EndsExecution() {
			break
		}
		if i < len(h) && h[i].Carried {
			continue // carried events are received before the code starts: no cut there
		}
		now := time.UnixMilli(h[i-1].Time)
		if i < len(h) {
			now = time.UnixMilli(h[i].Time)
		}
		// The stored custom status is the latest, as a real fetch would give.
		in := TurnInput{instance: w.s.instance, executionID: exec, history: h[:i], now: now, customStatus: w.s.custom}
		ack, err := runTurn(w.s.reg, in, quiet)
		var nd *NondeterminismError
		switch {
		case i >= endAt && i < len(h) && err == nil:
			// Cut in the cancellations the end records: the engine records the rest and the end.
			if !sameEvents(ack.HistoryDelta, h[i:]) {
				w.fail("replay of execution %d's first %d events ended with %s, history has %s", exec, i, describeEvents(ack.HistoryDelta), describeEvents(h[i:]))
			}
		case i < len(h) && isDecisionEvent(h[i].Kind):
			if !errors.As(err, &nd) || nd.Expected != "no further decisions" || !decides(nd.Actual, h[i]) {
				w.fail("replay of execution %d's first %d events: %v; want the code to decide %s next", exec, i, err, describeEvent(h[i]))
			}
		case err != nil:
			w.fail("replay of execution %d's first %d events: %v", exec, i, err)
		case i < len(h) && h[i].Kind.EndsExecution():
			if !sameEvents(ack.HistoryDelta, h[i:i+1]) {
				w.fail("replay of execution %d's first %d events ended with %s, history has %s", exec, i, describeEvents(ack.HistoryDelta), describeEvents(h[i:i+1]))
			}
		case len(ack.HistoryDelta) != 0:
			w.fail("replay of execution %d's first %d events (a turn boundary) decided %s", exec, i, describeEvents(ack.HistoryDelta))
		}
	}
}

// checkTurnsRerun runs every turn again from its stored history prefix and
// messages: the ack must be the same, field for field.
func (w *world) checkTurnsRerun() {
	for k, r := range w.recorded {
		item := r.item
		if item.Exists {
			item.History = w.histories[item.ExecutionID][:r.historyLen]
		}
		in, v := PrepareTurn(&item, r.now)
		if v != RunIt {
			continue
		}
		in.Local = w.s.local
		ack, err := runTurn(w.s.reg, in, quiet)
		if err != nil {
			w.fail("rerun of turn %d: %v", k, err)
		}
		if !reflect.DeepEqual(ack, r.ack) {
			w.fail("rerun of turn %d: ack differs:\n got %+v\nwant %+v", k, ack, r.ack)
		}
	}
}

func (w *world) fail(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("seed %d, turn %d: %s", w.seed, w.turns, fmt.Sprintf(format, args...))
}

// decides reports whether the engine's description of a decision is the event's.
func decides(actual string, e provider.Event) bool {
	if e.Kind == provider.EventCancelRequested {
		return strings.HasPrefix(actual, "CancelRequested of ") && strings.HasSuffix(actual, fmt.Sprintf("(event %d)", e.SourceID))
	}
	return actual == describeEvent(e)
}

func sameEvents(a, b []provider.Event) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func describeEvents(evs []provider.Event) string {
	parts := []string{}
	for _, e := range evs {
		b, _ := json.Marshal(e)
		parts = append(parts, string(b))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func describeBatch(items []provider.WorkItem) string {
	parts := []string{}
	for _, it := range items {
		parts = append(parts, fmt.Sprintf("%s(exec %d, id %d, %s)", it.Kind, it.ExecutionID, it.ID, it.Name))
	}
	return strings.Join(parts, ", ")
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
