package commit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// recorder is a store's paths that record which one a request took.
type recorder struct{ took string }

func (r *recorder) Turn(context.Context, string, provider.OrchestrationAck) error {
	r.took = "Turn"
	return nil
}

func (r *recorder) TurnLeasing(context.Context, string, provider.OrchestrationAck, []int, time.Duration) ([]*provider.WorkItemLease, error) {
	r.took = "TurnLeasing"
	return nil, nil
}

func (r *recorder) TurnNext(context.Context, string, string, provider.OrchestrationAck, []int, time.Duration, time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error) {
	r.took = "TurnNext"
	return nil, &provider.OrchestrationItem{}, nil
}

func (r *recorder) FirstTurn(context.Context, string, provider.OrchestrationAck, []int, time.Duration) (bool, []*provider.WorkItemLease, error) {
	r.took = "FirstTurn"
	return true, nil, nil
}

func (r *recorder) CachedTurn(_ context.Context, workToken string, _ *provider.OrchestrationItem, _ provider.OrchestrationAck, _ []int, _ time.Duration) ([]*provider.WorkItemLease, error) {
	r.took = "CachedTurn(" + workToken + ")"
	return nil, nil
}

func (r *recorder) Activity(context.Context, string, *provider.WorkItem) error {
	r.took = "Activity"
	return nil
}

func (r *recorder) ActivityQuietly(context.Context, string, provider.WorkItem, int64) (bool, error) {
	r.took = "ActivityQuietly"
	return true, nil
}

func (r *recorder) ActivityNext(context.Context, string, provider.WorkItem, time.Duration) (*provider.OrchestrationItem, error) {
	r.took = "ActivityNext"
	return &provider.OrchestrationItem{}, nil
}

func TestRoute(t *testing.T) {
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
		{"quiet", provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: "w", Result: result, QuietAfter: 3}}, "ActivityQuietly"},
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
			c, err := Route(context.Background(), tc.req, r)
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
			case "ActivityQuietly":
				if !c.Quiet {
					t.Error("Quiet not reported")
				}
			}
		})
	}
}

func TestStart(t *testing.T) {
	var took string
	queue := func(context.Context, provider.WorkItem, []provider.WorkItem, provider.IDReusePolicy) error {
		took = "queue"
		return nil
	}
	locking := func(context.Context, provider.WorkItem, provider.IDReusePolicy, time.Duration) (*provider.OrchestrationItem, error) {
		took = "locking"
		return nil, nil
	}
	ctx := context.Background()
	start := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: "a"}
	events := []provider.WorkItem{{Kind: provider.WorkExternalRaised, Instance: "a"}}
	if _, err := Start(ctx, provider.StartRequest{Start: start, Events: events}, queue, locking); err != nil || took != "queue" {
		t.Errorf("plain start took %q: %v", took, err)
	}
	if _, err := Start(ctx, provider.StartRequest{Start: start, LockFor: time.Minute}, queue, locking); err != nil || took != "locking" {
		t.Errorf("eager start took %q: %v", took, err)
	}
	took = ""
	if _, err := Start(ctx, provider.StartRequest{Start: start, Events: events, LockFor: time.Minute}, queue, locking); !errors.Is(err, provider.ErrInvalidArgument) || took != "" {
		t.Errorf("eager start with events: %v (took %q), want ErrInvalidArgument", err, took)
	}
}
