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
	if _, err := Route(ctx, provider.FetchRequest{Max: 3, LockFor: time.Minute, PollFor: time.Second, FromCache: true}, ready, named); err != nil || got != "ready" {
		t.Errorf("any: called %q, %v", got, err)
	}
	items, err := Route(ctx, provider.FetchRequest{Max: 1, LockFor: time.Minute, Instance: "a"}, ready, named)
	if err != nil || got != "named a" || len(items) != 1 || items[0].Instance != "a" {
		t.Errorf("named: called %q, %v, %v", got, items, err)
	}
	held = true
	if items, err := Route(ctx, provider.FetchRequest{Max: 1, LockFor: time.Minute, Instance: "a"}, ready, named); err != nil || len(items) != 0 {
		t.Errorf("named, held: %v, %v; want none", items, err)
	}
	got = ""
	if _, err := Route(ctx, provider.FetchRequest{Instance: "a", LockFor: time.Minute}, ready, named); !errors.Is(err, provider.ErrInvalidArgument) || got != "" {
		t.Errorf("named with Max 0: %v (called %q), want ErrInvalidArgument without a lookup", err, got)
	}
}
