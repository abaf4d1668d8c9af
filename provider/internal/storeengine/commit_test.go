package storeengine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func TestCommitRoutes(t *testing.T) {
	result := &provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "a"}
	locked := func(lease ...int) *provider.TurnCommit {
		return &provider.TurnCommit{Hold: provider.TurnLocked, Instance: "a", LockToken: "t", Lease: lease, LeaseFor: time.Minute}
	}
	cached := &provider.TurnCommit{Hold: provider.TurnCached, Cached: &provider.OrchestrationItem{Instance: "a"}}
	for _, tc := range []struct {
		name string
		req  provider.CommitRequest
		want string // the path taken, or "invalid"
	}{
		{"locked turn", provider.CommitRequest{Turn: locked()}, "Turn"},
		{"locked turn leasing", provider.CommitRequest{Turn: locked(0)}, "TurnLeasing"},
		{"locked turn, next", provider.CommitRequest{Turn: locked(), LockNextFor: time.Minute}, "TurnNext"},
		{"new instance", provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnNew, Instance: "a"}}, "FirstTurn"},
		{"cached with result", provider.CommitRequest{Turn: cached, Activity: &provider.ActivityResult{LockToken: "w", Result: result}}, "CachedTurn(w)"},
		{"cached timers", provider.CommitRequest{Turn: cached}, "CachedTurn()"},
		{"result", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w", Result: result}}, "Activity"},
		{"removal", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w"}}, "Activity"},
		// Quiet only with the history cached (TestQuietNeedsTheCachedHistory).
		{"quiet, uncached", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w", Result: result, QuietAfter: 3}}, "Activity"},
		{"result, next", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w", Result: result}, LockNextFor: time.Minute}, "ActivityNext"},

		{"nothing", provider.CommitRequest{}, "invalid"},
		{"negative next", provider.CommitRequest{Turn: locked(), LockNextFor: -1}, "invalid"},
		{"no hold", provider.CommitRequest{Turn: &provider.TurnCommit{}}, "invalid"},
		{"locked turn with result", provider.CommitRequest{Turn: locked(), Activity: &provider.ActivityResult{LockToken: "w", Result: result}}, "invalid"},
		{"next without instance", provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnLocked, LockToken: "t"}, LockNextFor: time.Minute}, "invalid"},
		{"new instance, next", provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnNew, Instance: "a"}, LockNextFor: time.Minute}, "invalid"},
		{"new instance with result", provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnNew, Instance: "a"}, Activity: &provider.ActivityResult{LockToken: "w", Result: result}}, "invalid"},
		{"cached without turn", provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnCached}}, "invalid"},
		{"cached, next", provider.CommitRequest{Turn: cached, LockNextFor: time.Minute}, "invalid"},
		{"cached, quiet", provider.CommitRequest{Turn: cached, Activity: &provider.ActivityResult{LockToken: "w", Result: result, QuietAfter: 2}}, "invalid"},
		{"cached, no result", provider.CommitRequest{Turn: cached, Activity: &provider.ActivityResult{LockToken: "w"}}, "invalid"},
		{"quiet without result", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w", QuietAfter: 3}}, "invalid"},
		{"quiet, next", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w", Result: result, QuietAfter: 3}, LockNextFor: time.Minute}, "invalid"},
		{"negative quiet", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w", Result: result, QuietAfter: -1}}, "invalid"},
		{"removal, next", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w"}, LockNextFor: time.Minute}, "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			c, err := New(r, Config{}).Commit(context.Background(), tc.req)
			if tc.want == "invalid" {
				if !errors.Is(err, provider.ErrInvalidArgument) || r.took != "" {
					t.Fatalf("got %v, took %q; want ErrInvalidArgument and no path", err, r.took)
				}
				return
			}
			if err != nil || r.took != tc.want {
				t.Fatalf("took %q (%v), want %q", r.took, err, tc.want)
			}
			switch r.took {
			case "TurnNext", "ActivityNext":
				if c.Next == nil {
					t.Error("the next turn was not returned")
				}
			case "FirstTurn":
				if !c.Created {
					t.Error("Created not reported")
				}
			}
		})
	}
}

func TestStartRoutes(t *testing.T) {
	r := &recorder{}
	e := New(r, Config{})
	ctx := context.Background()
	start := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: "a"}
	events := []provider.WorkItem{{Kind: provider.WorkExternalRaised, Instance: "a"}}
	if _, err := e.StartInstance(ctx, provider.StartRequest{Start: start, Events: events}); err != nil || r.took != "Start" {
		t.Errorf("plain start took %q: %v", r.took, err)
	}
	if _, err := e.StartInstance(ctx, provider.StartRequest{Start: start, LockFor: time.Minute}); err != nil || r.took != "StartLocking" {
		t.Errorf("eager start took %q: %v", r.took, err)
	}
	r.took = ""
	if _, err := e.StartInstance(ctx, provider.StartRequest{Start: start, Events: events, LockFor: time.Minute}); !errors.Is(err, provider.ErrInvalidArgument) || r.took != "" {
		t.Errorf("eager start with events: %v (took %q), want ErrInvalidArgument", err, r.took)
	}
}

// A quiet result goes to the driver's quiet check only when the cache holds
// the history the caller judged from, with the cached incarnation.
func TestQuietNeedsTheCachedHistory(t *testing.T) {
	r := &recorder{}
	e := New(r, Config{})
	result := &provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "a", ExecutionID: 1}
	quiet := provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w", Result: result, QuietAfter: 2}}
	ctx := context.Background()
	if c, err := e.Commit(ctx, quiet); err != nil || r.took != "Activity" || c.Quiet {
		t.Fatalf("uncached: took %q, quiet %v, %v; want a plain Activity", r.took, c.Quiet, err)
	}
	e.Hist.Store("a", 7, 1, []provider.Event{{ID: 1}, {ID: 2}}, "")
	if c, err := e.Commit(ctx, quiet); err != nil || r.took != "ActivityQuietly" || !c.Quiet {
		t.Fatalf("cached: took %q, quiet %v, %v; want ActivityQuietly", r.took, c.Quiet, err)
	}
	if want := (QuietCheck{Incarnation: 7, Execution: 1, LastEvent: 2}); r.quiet != want {
		t.Errorf("quiet check %+v, want %+v", r.quiet, want)
	}
	quiet.Activity.QuietAfter = 1 // the history moved on since the caller judged
	if _, err := e.Commit(ctx, quiet); err != nil || r.took != "Activity" {
		t.Errorf("moved on: took %q, %v; want a plain Activity", r.took, err)
	}
}
