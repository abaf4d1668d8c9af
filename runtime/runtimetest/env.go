// Package runtimetest runs orchestrations in memory, for unit tests of
// users' orchestration code: no database, no dispatchers, no goroutines of
// the test's own. It drives the real replay engine turn by turn, runs
// activities inline, and keeps a virtual clock that jumps to the next timer
// when nothing else is ready, so an orchestration that sleeps for an hour,
// or retries an activity with minutes of backoff, finishes at once.
//
//	env := runtimetest.New(t, reg)
//	runtimetest.OverrideActivity(env, "Charge", func(ctx context.Context, o Order) (string, error) {
//		return "receipt-1", nil
//	})
//	inst := env.Start("Checkout", Order{ID: 7})
//	if err := inst.Run(); err != nil { t.Fatal(err) }
//	var receipt string
//	if err := inst.Status().DecodeOutput(&receipt); err != nil { ... }
//
// An override stands in for a registered activity of the same types: a name
// the registry lacks (a typo) or a function whose input or output type differs
// from the registered one fails the test at OverrideActivity, naming the
// registered activities or both signatures, instead of the real activity
// running or the override failing mid-run.
//
// Every turn replays the whole history, as a worker does, so nondeterministic
// code fails here first.
package runtimetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/runtime/internal/engine"
)

// DefaultMaxSteps bounds a run (turns plus activity executions plus clock
// advances), so an orchestration that never ends fails the test instead of
// hanging it.
const DefaultMaxSteps = 100_000

// Env is an in-memory world of instances, queues and a virtual clock.
// It is not safe for concurrent use.
type Env struct {
	t         testing.TB
	reg       *runtime.Registry
	overrides map[string]*runtime.Registry
	logger    *slog.Logger
	maxSteps  int
	// localMu runs a turn's local activities one at a time.
	localMu sync.Mutex

	now       time.Time
	started   time.Time
	instances map[string]*instance
	nextID    int

	ready      []provider.WorkItem // orchestrator messages visible now, in arrival order
	delayed    []delayedItem       // orchestrator messages (timers) visible later
	activities []provider.WorkItem
	callbacks  []callback
	seq        int
	calls      map[string]int
	err        error
}

type delayedItem struct {
	at   time.Time
	seq  int
	item provider.WorkItem
}

type callback struct {
	at  time.Time
	seq int
	fn  func()
}

// Option configures New.
type Option func(*Env)

// WithStartTime sets the virtual clock's starting time (default 2030-01-01 UTC).
func WithStartTime(t time.Time) Option { return func(e *Env) { e.now = t.Truncate(time.Millisecond) } }

// WithLogger sends the orchestrations' replay-safe logs to l (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(e *Env) { e.logger = l } }

// WithMaxSteps changes DefaultMaxSteps.
func WithMaxSteps(n int) Option { return func(e *Env) { e.maxSteps = n } }

// New returns an environment running the orchestrations and activities of
// reg. t receives the kit's own failures (an input that cannot be encoded, an
// override that matches no registered activity); outside a test it may be
// nil, and those failures panic.
func New(t testing.TB, reg *runtime.Registry, opts ...Option) *Env {
	e := &Env{t: t, reg: reg, overrides: map[string]*runtime.Registry{},
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)), maxSteps: DefaultMaxSteps,
		now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), instances: map[string]*instance{}, calls: map[string]int{}}
	for _, o := range opts {
		o(e)
	}
	e.started = e.now
	return e
}

// OverrideActivity replaces the activity name for this environment only; the
// rest of the registry stays as it is. A later override of the same name wins.
// name must be registered, and fn must have the registered function's input
// and output types; otherwise the test fails here. An activity added untyped
// (Registry.AddActivity) takes an override of any types.
func OverrideActivity[In, Out any](e *Env, name string, fn func(ctx context.Context, input In) (Out, error)) {
	if e.t != nil {
		e.t.Helper()
	}
	if err := e.checkOverride(name, reflect.TypeFor[func(context.Context, In) (Out, error)]()); err != nil {
		e.fatalf("runtimetest: %v", err)
		return
	}
	r := runtime.NewRegistry()
	runtime.RegisterActivity(r, name, fn)
	e.overrides[name] = r
}

// checkOverride reports an override of type typ that cannot stand in for the
// activity name. Unchecked, a misspelled name leaves the real activity
// running, and a changed signature fails only when the override's input is
// decoded mid-run.
func (e *Env) checkOverride(name string, typ reflect.Type) error {
	registered, ok := engine.ActivityType(e.reg, name)
	if !ok {
		return fmt.Errorf("override activity %q: not registered; registered activities: %s", name, nameList(e.reg.Activities()))
	}
	if registered != nil && registered != typ {
		return fmt.Errorf("override activity %q: %v does not match the registered %v", name, typ, registered)
	}
	return nil
}

// nameList joins sorted names for a message.
func nameList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Now is the virtual clock.
func (e *Env) Now() time.Time { return e.now }

// Elapsed is how far the virtual clock has moved since New.
func (e *Env) Elapsed() time.Duration { return e.now.Sub(e.started) }

// ActivityCalls counts how often the activity name ran (each retry counts).
func (e *Env) ActivityCalls(name string) int { return e.calls[name] }

// After runs fn once the virtual clock has moved d past now, before any timer
// due later. Use it to raise an event at a point in virtual time.
func (e *Env) After(d time.Duration, fn func()) {
	e.seq++
	e.callbacks = append(e.callbacks, callback{at: e.now.Add(d), seq: e.seq, fn: fn})
}

// Start queues the start of a new instance of orchestration with input and
// returns it; nothing runs until Run, RunUntil or Step. Its instance ID is
// "test-1", "test-2", ... in order of starts.
func (e *Env) Start(orchestration string, input any) *Instance {
	e.nextID++
	return e.StartInstance(fmt.Sprintf("test-%d", e.nextID), orchestration, input)
}

// StartInstance is Start with a chosen instance ID.
func (e *Env) StartInstance(id, orchestration string, input any) *Instance {
	payload, err := engine.EncodePayload(input)
	if err != nil {
		e.fatalf("runtimetest: start %q: %v", id, err)
	}
	e.enqueue(provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: id, Name: orchestration, Input: payload, ExecutionID: 1})
	return &Instance{env: e, id: id}
}

// Instance returns a handle on an instance started by Start, StartInstance or
// by an orchestration (a sub-orchestration or a detached start).
func (e *Env) Instance(id string) *Instance { return &Instance{env: e, id: id} }

// RunAll runs until nothing is left to do: every instance finished or waiting
// for an event nobody raises.
func (e *Env) RunAll() error {
	for {
		progressed, err := e.Step()
		if err != nil || !progressed {
			return err
		}
	}
}

// Step does the next thing in the world: a turn of an instance with
// messages, else one activity, else it moves the clock to the next timer or
// callback. It reports false when there is nothing left to do, and an error
// when a turn cannot run (nondeterminism, an unregistered orchestration, code
// blocked past its step deadline) or the run exceeded its step budget.
func (e *Env) Step() (bool, error) {
	if e.err != nil {
		return false, e.err
	}
	if e.maxSteps--; e.maxSteps < 0 {
		e.err = fmt.Errorf("runtimetest: more than the step budget (WithMaxSteps) without finishing; virtual time %v", e.Elapsed())
		return false, e.err
	}
	switch {
	case len(e.ready) > 0:
		e.err = e.runTurn()
	case len(e.activities) > 0:
		e.runActivity()
	default:
		return e.advanceClock(), nil
	}
	return true, e.err
}

func (e *Env) enqueue(item provider.WorkItem) {
	if item.FireAt > 0 && time.UnixMilli(item.FireAt).After(e.now) {
		e.seq++
		e.delayed = append(e.delayed, delayedItem{at: time.UnixMilli(item.FireAt), seq: e.seq, item: item})
		return
	}
	e.ready = append(e.ready, item)
}

// advanceClock moves the clock to the earliest timer or callback and makes
// everything due then ready. It reports false when there is none.
func (e *Env) advanceClock() bool {
	if len(e.delayed) == 0 && len(e.callbacks) == 0 {
		return false
	}
	next := time.Time{}
	for _, d := range e.delayed {
		if next.IsZero() || d.at.Before(next) {
			next = d.at
		}
	}
	for _, c := range e.callbacks {
		if next.IsZero() || c.at.Before(next) {
			next = c.at
		}
	}
	if next.After(e.now) {
		e.now = next
	}
	e.releaseDue()
	return true
}

func (e *Env) releaseDue() {
	sort.SliceStable(e.delayed, func(i, j int) bool {
		if !e.delayed[i].at.Equal(e.delayed[j].at) {
			return e.delayed[i].at.Before(e.delayed[j].at)
		}
		return e.delayed[i].seq < e.delayed[j].seq
	})
	for len(e.delayed) > 0 && !e.delayed[0].at.After(e.now) {
		e.ready = append(e.ready, e.delayed[0].item)
		e.delayed = e.delayed[1:]
	}
	var due []callback
	e.callbacks = slices.DeleteFunc(e.callbacks, func(c callback) bool {
		if c.at.After(e.now) {
			return false
		}
		due = append(due, c)
		return true
	})
	sort.Slice(due, func(i, j int) bool { return due[i].seq < due[j].seq })
	for _, c := range due {
		c.fn()
	}
}

func (e *Env) fatalf(format string, args ...any) {
	if e.t == nil {
		panic(fmt.Sprintf(format, args...))
	}
	e.t.Helper()
	e.t.Fatalf(format, args...)
}
