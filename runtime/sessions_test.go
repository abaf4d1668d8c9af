package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// sessionRegistry registers Affine: calls of Where in one session (the
// instance's), with a wait for "next" before the last one; Where answers
// with the worker running it and the session it ran in.
func sessionRegistry() *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Where", func(ctx context.Context, _ int) (string, error) {
		info, _ := runtime.ActivityInfoFrom(ctx)
		return info.Worker + "@" + info.Session, nil
	})
	runtime.RegisterOrchestration(reg, "Affine", func(ctx *runtime.OrchestrationContext, calls int) ([]string, error) {
		session := runtime.WithSession("s-" + ctx.InstanceID())
		var ran []string
		for i := range calls {
			if i == calls-1 {
				if _, err := runtime.Await[string](ctx.WaitForEvent("next")); err != nil {
					return nil, err
				}
			}
			where, err := runtime.Await[string](ctx.CallActivity("Where", i, session, runtime.WithLocal()))
			if err != nil {
				return nil, err
			}
			ran = append(ran, where)
		}
		return ran, nil
	})
	return reg
}

func sessionOptions(worker string) runtime.Options {
	opts := fastOptions()
	opts.WorkerID, opts.SessionLockTimeout = worker, 2*time.Second
	return opts
}

// Every activity of a session runs on the worker that owns it; when that
// worker shuts down, the session moves to another and stays there.
func TestSessionActivitiesRunOnTheirOwner(t *testing.T) {
	onEachStore(t, func(t *testing.T, store testStore) {
		rts := map[string]*runtime.Runtime{}
		for _, w := range []string{"w1", "w2"} {
			rts[w] = startRuntime(t, store, sessionRegistry(), sessionOptions(w))
		}
		c := runtime.NewClient(store)
		const instances, calls = 6, 5
		for i := range instances {
			if err := c.Start(t.Context(), fmt.Sprint("aff-", i), "Affine", calls); err != nil {
				t.Fatal(err)
			}
		}
		owners := map[string]string{}
		for i := range instances {
			id := fmt.Sprint("aff-", i)
			waitForCompletions(t, c, id, calls-1)
			h, err := c.History(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			owners[id] = ranOn(t, h)
		}
		// The owner of aff-0 shuts down: its sessions go to the other.
		gone := owners["aff-0"]
		if err := rts[gone].Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i := range instances {
			id := fmt.Sprint("aff-", i)
			if err := c.RaiseEvent(t.Context(), id, "next", ""); err != nil {
				t.Fatal(err)
			}
			st := wait(t, c, id)
			var ran []string
			if err := json.Unmarshal([]byte(st.Output), &ran); err != nil || len(ran) != calls {
				t.Fatalf("%s: %s %s %v", id, st.Status, st.Output, err)
			}
			for k, where := range ran[:calls-1] {
				if where != owners[id]+"@s-"+id {
					t.Fatalf("%s call %d ran on %s, want the session's owner %s: %v", id, k, where, owners[id], ran)
				}
			}
			if last := ran[calls-1]; owners[id] == gone && strings.HasPrefix(last, gone+"@") {
				t.Fatalf("%s's last call ran on %s, which had shut down", id, last)
			}
		}
	})
}

// ranOn is the worker that ran the activities recorded so far, checking
// they all ran on one.
func ranOn(t *testing.T, h []provider.Event) string {
	t.Helper()
	var worker string
	for _, ev := range h {
		if ev.Kind != provider.EventActivityCompleted {
			continue
		}
		var where string
		if err := json.Unmarshal([]byte(ev.Output), &where); err != nil {
			t.Fatal(err)
		}
		w, _, _ := strings.Cut(where, "@")
		if worker != "" && w != worker {
			t.Fatalf("a session's activities ran on %s and %s", worker, w)
		}
		worker = w
	}
	return worker
}

// waitForCompletions waits until instance's history records n completed
// activities.
func waitForCompletions(t *testing.T, c *runtime.Client, instance string, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		h, err := c.History(t.Context(), instance)
		if err == nil && countKinds(h, provider.EventActivityCompleted) >= n {
			return
		}
	}
	t.Fatalf("%s never completed %d activities", instance, n)
}
