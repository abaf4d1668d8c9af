package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// recorder is an interceptor that logs what it sees, named so that the
// order of a chain shows.
type recorder struct {
	runtime.InterceptorBase
	name string
	mu   *sync.Mutex
	log  *[]string
	// tag, when set, is added to the headers of every scheduled decision.
	tag string
	// refuse fails the calls it names ("start", "activity Name").
	refuse string
}

func (r *recorder) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, r.name+":"+fmt.Sprintf(format, args...))
}

func (r *recorder) InterceptClient(ctx context.Context, c *runtime.ClientCall, next func(context.Context) error) error {
	r.note("%s %s", c.Op, c.Name)
	if r.refuse == string(c.Op) {
		return errors.New(r.name + " refuses " + string(c.Op))
	}
	return next(ctx)
}

func (r *recorder) InterceptTurn(ctx context.Context, t *runtime.TurnInfo, next func(context.Context) error) error {
	err := next(ctx)
	r.note("turn %s replayed=%d status=%s tenant=%s", t.Orchestration, t.Replayed, t.Status, t.Headers["tenant"])
	return err
}

func (r *recorder) InterceptActivity(ctx context.Context, a *runtime.ActivityCall, next func(context.Context) error) error {
	r.note("activity %s tenant=%s tag=%s", a.Name, a.Headers["tenant"], a.Headers["tag"])
	if r.refuse == "activity "+a.Name {
		return errors.New(r.name + " refuses activity " + a.Name)
	}
	return next(ctx)
}

func (r *recorder) InterceptSchedule(_ context.Context, s *runtime.Scheduled) {
	r.note("schedule %s %s attempt=%d", s.Kind, s.Name, s.Attempt)
	if r.tag != "" {
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers["tag"] = r.tag
	}
}

func interceptedRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Echo", func(_ context.Context, s string) (string, error) { return s, nil })
	runtime.RegisterOrchestration(reg, "Child", func(ctx *runtime.OrchestrationContext, s string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Echo", s))
	})
	runtime.RegisterOrchestration(reg, "Parent", func(ctx *runtime.OrchestrationContext, s string) (string, error) {
		a, err := runtime.Await[string](ctx.CallActivity("Echo", s))
		if err != nil {
			return "", err
		}
		return runtime.Await[string](ctx.CallSubOrchestration("Child", a))
	})
	return reg
}

// Interceptors compose (the first outermost), see each client call, turn,
// activity attempt and new decision once (a turn's replay of earlier ones
// schedules nothing), and the headers of a start reach every activity and
// child, recorded in history with what interceptors add.
func TestInterceptorsSeeEachCallOnce(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		var mu sync.Mutex
		var log []string
		outer := &recorder{name: "outer", mu: &mu, log: &log, tag: "blue"}
		inner := &recorder{name: "inner", mu: &mu, log: &log}
		opts := fastOptions()
		opts.Interceptors = []runtime.Interceptor{outer, inner}
		rt := startRuntime(t, store, interceptedRegistry(), opts)
		c := rt.Client()
		if err := c.Start(t.Context(), "p", "Parent", "hi", runtime.StartHeader("tenant", "acme")); err != nil {
			t.Fatal(err)
		}
		if st := wait(t, c, "p"); st.Status != runtime.StatusCompleted || st.Output != `"hi"` {
			t.Fatalf("parent: %+v", st)
		}
		// The last turn's interceptors return after its commit, which Wait
		// may see first: Shutdown waits for them.
		if err := rt.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := slices.Clone(log)
		mu.Unlock()
		count := func(entry string) int {
			return len(slices.DeleteFunc(slices.Clone(got), func(s string) bool { return s != entry }))
		}
		for entry, want := range map[string]int{
			"outer:start Parent":                       1,
			"inner:start Parent":                       1,
			"outer:schedule activity Echo attempt=1":   2, // the parent's and the child's
			"inner:schedule activity Echo attempt=1":   2,
			"outer:schedule child Child attempt=1":     1,
			"outer:activity Echo tenant=acme tag=blue": 2,
			"inner:activity Echo tenant=acme tag=blue": 2,
		} {
			if n := count(entry); n != want {
				t.Errorf("%q seen %d times, want %d\nlog:\n%s", entry, n, want, strings.Join(got, "\n"))
			}
		}
		if i, j := slices.Index(got, "outer:start Parent"), slices.Index(got, "inner:start Parent"); i < 0 || j < i {
			t.Errorf("the first interceptor is not outermost: %v", got)
		}
		var turns []string
		for _, e := range got {
			if strings.HasPrefix(e, "outer:turn Parent") {
				turns = append(turns, e)
			}
		}
		if len(turns) == 0 || turns[0] != "outer:turn Parent replayed=0 status=Running tenant=acme" ||
			turns[len(turns)-1] == turns[0] || !strings.Contains(turns[len(turns)-1], "status=Completed") {
			t.Errorf("parent's turns: %v; want the first with nothing replayed, the last Completed", turns)
		}
		// What the interceptors saw is in history: a replay elsewhere sees the same.
		history, err := c.History(t.Context(), "p")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range history {
			switch e.Kind {
			case provider.EventOrchestrationStarted:
				if e.Headers["tenant"] != "acme" || e.Headers["tag"] != "" {
					t.Errorf("start headers %v, want the start's own", e.Headers)
				}
			case provider.EventActivityScheduled, provider.EventSubOrchestrationScheduled:
				if e.Headers["tenant"] != "acme" || e.Headers["tag"] != "blue" {
					t.Errorf("%s headers %v, want the start's and the interceptor's", e.Kind, e.Headers)
				}
			}
		}
	})
}

// An interceptor's error replaces the call: a refused start starts nothing,
// a refused activity attempt fails like the activity would.
func TestInterceptorErrorsFailTheCall(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		var mu sync.Mutex
		var log []string
		opts := fastOptions()
		opts.Interceptors = []runtime.Interceptor{&recorder{name: "guard", mu: &mu, log: &log, refuse: "activity Echo"}}
		rt := startRuntime(t, store, interceptedRegistry(), opts)
		refusing := runtime.NewClient(store, runtime.ClientInterceptors(&recorder{name: "gate", mu: &mu, log: &log, refuse: "start"}))
		err := refusing.Start(t.Context(), "refused", "Parent", "x")
		if err == nil || !strings.Contains(err.Error(), "gate refuses start") {
			t.Fatalf("start through a refusing interceptor: %v", err)
		}
		if _, err := rt.Client().Status(t.Context(), "refused"); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("a refused start left an instance: %v", err)
		}
		c := rt.Client()
		if err := c.Start(t.Context(), "guarded", "Parent", "x"); err != nil {
			t.Fatal(err)
		}
		st := wait(t, c, "guarded")
		if st.Status != runtime.StatusFailed || st.Failure == nil || !strings.Contains(st.Failure.Message, "guard refuses activity Echo") {
			t.Fatalf("instance whose activity the interceptor refused: %+v", st)
		}
	})
}
