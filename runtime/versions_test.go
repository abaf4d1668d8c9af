package runtime_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// flowV1 waits for "go"; told to move, it continues as new into 2.0.0.
func flowV1(build string) func(*runtime.OrchestrationContext, string) (string, error) {
	return func(ctx *runtime.OrchestrationContext, in string) (string, error) {
		cmd, err := runtime.Await[string](ctx.WaitForEvent("go"))
		if err != nil {
			return "", err
		}
		if cmd == "move" {
			return "", ctx.ContinueAsNewVersion("2.0.0", in)
		}
		return build + " ran 1.0.0", nil
	}
}

// flowV2 decides differently from flowV1: replaying one's history with the
// other's code is nondeterministic.
func flowV2(build string) func(*runtime.OrchestrationContext, string) (string, error) {
	return func(ctx *runtime.OrchestrationContext, in string) (string, error) {
		if _, err := runtime.Await[string](ctx.CallActivity("Echo", in)); err != nil {
			return "", err
		}
		return build + " ran 2.0.0", nil
	}
}

func flowRegistry(build string, versions ...string) *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Echo", func(_ context.Context, s string) (string, error) { return s, nil })
	for _, v := range versions {
		fn := flowV1(build)
		if v == "2.0.0" {
			fn = flowV2(build)
		}
		runtime.RegisterOrchestrationVersion(reg, "Flow", v, fn)
	}
	return reg
}

// Two builds on one store, one with version 1.0.0 of Flow and one with
// 2.0.0, each run only the instances of their version: none is ever
// replayed against the other's code.
func TestTwoBuildsNeverRunEachOthersInstances(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		seen := map[string]*versionsSeen{"old": {}, "new": {}}
		for build, version := range map[string]string{"old": "1.0.0", "new": "2.0.0"} {
			opts := fastOptions()
			opts.Interceptors = []runtime.Interceptor{seen[build]}
			startRuntime(t, store, flowRegistry(build, version), opts)
		}
		c := runtime.NewClient(store)
		const n = 6
		for i := range n {
			for _, v := range []string{"1.0.0", "2.0.0"} {
				if err := c.Start(t.Context(), fmt.Sprintf("%s-%d", v, i), "Flow", "x", runtime.StartVersion(v)); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i := range n {
			if err := c.RaiseEvent(t.Context(), fmt.Sprintf("1.0.0-%d", i), "go", "stay"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			for v, want := range map[string]string{"1.0.0": `"old ran 1.0.0"`, "2.0.0": `"new ran 2.0.0"`} {
				id := fmt.Sprintf("%s-%d", v, i)
				st := wait(t, c, id)
				if st.Status != runtime.StatusCompleted || st.Output != want || st.LastError != nil {
					t.Fatalf("%s: %s %s failure %v last error %v; want %s, never handed back", id, st.Status, st.Output, st.Failure, st.LastError, want)
				}
			}
		}
		for build, want := range map[string]string{"old": "1.0.0", "new": "2.0.0"} {
			if got := seen[build].list(); len(got) != 1 || got[0] != want {
				t.Errorf("the %s build ran turns of versions %v, want only %s", build, got, want)
			}
		}
	})
}

// versionsSeen records the versions of the turns a runtime runs.
type versionsSeen struct {
	runtime.InterceptorBase
	mu       sync.Mutex
	versions map[string]bool
}

func (v *versionsSeen) InterceptTurn(ctx context.Context, turn *runtime.TurnInfo, next func(context.Context) error) error {
	v.mu.Lock()
	if v.versions == nil {
		v.versions = map[string]bool{}
	}
	v.versions[turn.Version] = true
	v.mu.Unlock()
	return next(ctx)
}

func (v *versionsSeen) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Sorted(maps.Keys(v.versions))
}

// ContinueAsNewVersion moves an instance to new code: the old build, which
// still takes the instance's turns at 1.0.0, leaves the 2.0.0 execution to
// the build that has it.
func TestContinueAsNewVersionMovesToTheNewBuild(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		startRuntime(t, store, flowRegistry("old", "1.0.0"), fastOptions())
		c := runtime.NewClient(store)
		if err := c.Start(t.Context(), "mover", "Flow", "x", runtime.StartVersion("1.0.0")); err != nil {
			t.Fatal(err)
		}
		if err := c.RaiseEvent(t.Context(), "mover", "go", "move"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // the old build alone meanwhile: the new execution waits
		if st, err := c.Status(t.Context(), "mover"); err != nil || st.Finished() {
			t.Fatalf("status with the old build alone: %+v %v, want still running", st, err)
		}
		startRuntime(t, store, flowRegistry("new", "1.0.0", "2.0.0"), fastOptions())
		st := wait(t, c, "mover")
		if st.Status != runtime.StatusCompleted || st.Output != `"new ran 2.0.0"` || st.ExecutionID != 2 || st.Version != "2.0.0" {
			t.Fatalf("got %s %s execution %d version %s, %v", st.Status, st.Output, st.ExecutionID, st.Version, st.Failure)
		}
	})
}

// UseVersion keeps new instances on a version other than the latest.
func TestUseVersionPinsNewInstances(t *testing.T) {
	store := openStore(t, "")
	reg := flowRegistry("b", "1.0.0", "2.0.0")
	if err := reg.UseVersion("Flow", "v1.0.0"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]string{{"Flow", "3.0.0"}, {"Nope", "1.0.0"}} {
		if err := reg.UseVersion(bad[0], bad[1]); err == nil {
			t.Errorf("UseVersion(%q, %q) accepted", bad[0], bad[1])
		}
	}
	startRuntime(t, store, reg, fastOptions())
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "pinned", "Flow", "x"); err != nil {
		t.Fatal(err)
	}
	if err := c.RaiseEvent(t.Context(), "pinned", "go", "stay"); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c, "pinned"); st.Output != `"b ran 1.0.0"` || st.Version != "1.0.0" {
		t.Fatalf("got %s at %s, want 1.0.0 ran", st.Output, st.Version)
	}
	if err := reg.UseVersion("Flow", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context(), "latest", "Flow", "x"); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c, "latest"); st.Output != `"b ran 2.0.0"` {
		t.Fatalf("got %s after UseVersion(\"\"), want the latest", st.Output)
	}
}
