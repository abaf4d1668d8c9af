package fetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func TestRoute(t *testing.T) {
	var got string
	ready := func(_ context.Context, max int, lockFor, pollFor time.Duration, fromCache bool) ([]*provider.OrchestrationItem, error) {
		got = "ready"
		if max != 3 || lockFor != time.Minute || pollFor != time.Second || !fromCache {
			t.Errorf("ready got max %d, lock %v, poll %v, cache %v", max, lockFor, pollFor, fromCache)
		}
		return nil, nil
	}
	held := false
	named := func(_ context.Context, instance string, lockFor time.Duration) (*provider.OrchestrationItem, error) {
		got = "named " + instance
		if held {
			return nil, nil
		}
		return &provider.OrchestrationItem{Instance: instance}, nil
	}
	ctx := context.Background()
	if _, err := Route(ctx, provider.FetchRequest{Max: 3, LockFor: time.Minute, PollFor: time.Second, FromCache: true}, Lookups{Ready: ready, Named: named}); err != nil || got != "ready" {
		t.Errorf("any: called %q, %v", got, err)
	}
	items, err := Route(ctx, provider.FetchRequest{Max: 1, LockFor: time.Minute, Instance: "a"}, Lookups{Ready: ready, Named: named})
	if err != nil || got != "named a" || len(items) != 1 || items[0].Instance != "a" {
		t.Errorf("named: called %q, %v, %v", got, items, err)
	}
	held = true
	if items, err := Route(ctx, provider.FetchRequest{Max: 1, LockFor: time.Minute, Instance: "a"}, Lookups{Ready: ready, Named: named}); err != nil || len(items) != 0 {
		t.Errorf("named, held: %v, %v; want none", items, err)
	}
	got = ""
	if _, err := Route(ctx, provider.FetchRequest{Instance: "a", LockFor: time.Minute}, Lookups{Ready: ready, Named: named}); !errors.Is(err, provider.ErrInvalidArgument) || got != "" {
		t.Errorf("named with Max 0: %v (called %q), want ErrInvalidArgument without a lookup", err, got)
	}
}

func TestRouteDeliver(t *testing.T) {
	var asked []string
	cached := func(instance string, execution int64, msg provider.WorkItem, queued ...provider.WorkItem) *provider.OrchestrationItem {
		asked = append(asked, instance)
		if execution != msg.ExecutionID || len(queued) != 1 || queued[0].ID != 2 || msg.ID != 3 {
			t.Errorf("cache asked for execution %d, msg %+v after %+v", execution, msg, queued)
		}
		return &provider.OrchestrationItem{Instance: instance, Cached: true}
	}
	never := func(context.Context, string, time.Duration) (*provider.OrchestrationItem, error) {
		t.Error("a Deliver fetch reached the store")
		return nil, nil
	}
	l := Lookups{Named: never, Cached: cached}
	deliver := []provider.WorkItem{{Instance: "a", ExecutionID: 2, ID: 2}, {Instance: "a", ExecutionID: 2, ID: 3}}
	ctx := context.Background()
	items, err := Route(ctx, provider.FetchRequest{Max: 1, Instance: "a", FromCache: true, Deliver: deliver}, l)
	if err != nil || len(items) != 1 || !items[0].Cached || len(asked) != 1 {
		t.Fatalf("deliver: %v, %v (cache asked %v)", items, err, asked)
	}
	for name, bad := range map[string]provider.FetchRequest{
		"not FromCache":    {Max: 1, Instance: "a", Deliver: deliver},
		"no instance":      {Max: 1, FromCache: true, Deliver: deliver},
		"Max 0":            {Instance: "a", FromCache: true, Deliver: deliver},
		"another's result": {Max: 1, Instance: "b", FromCache: true, Deliver: deliver},
	} {
		if _, err := Route(ctx, bad, l); !errors.Is(err, provider.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if len(asked) != 1 {
		t.Errorf("the cache was asked for invalid requests: %v", asked)
	}
}
