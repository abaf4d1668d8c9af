// Package fetch serves a provider.FetchRequest with a store's three ways of
// getting turns: any ready instances, one named instance, or a turn built
// from the history cache alone. It holds what the request means, so each
// store implements only the lookups.
//
// It imports provider and provider/internal/encode only.
package fetch

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// Lookups are a store's ways of getting turns.
type Lookups struct {
	// Ready locks the turns of up to max ready instances, waiting up to
	// pollFor; fromCache as provider.FetchRequest.FromCache.
	Ready func(ctx context.Context, max int, lockFor, pollFor time.Duration, fromCache bool) ([]*provider.OrchestrationItem, error)
	// Named locks the one named instance's turn, or returns nil without waiting.
	Named func(ctx context.Context, instance string, lockFor time.Duration) (*provider.OrchestrationItem, error)
	// Cached builds from the cache the turn of instance's execution that
	// delivers queued, then msg (provider.FetchRequest.Deliver), or nil.
	Cached func(instance string, execution int64, msg provider.WorkItem, queued ...provider.WorkItem) *provider.OrchestrationItem
}

// Route answers req with the lookup it asks for.
func Route(ctx context.Context, req provider.FetchRequest, l Lookups) ([]*provider.OrchestrationItem, error) {
	if len(req.Deliver) > 0 {
		return fromCache(req, l.Cached)
	}
	if req.Instance == "" {
		return l.Ready(ctx, req.Max, req.LockFor, req.PollFor, req.FromCache)
	}
	if req.Max < 1 {
		return nil, encode.Invalid("fetch instance item", req.Instance, "max must be at least 1, got %d", req.Max)
	}
	item, err := l.Named(ctx, req.Instance, req.LockFor)
	if err != nil || item == nil {
		return nil, err
	}
	return []*provider.OrchestrationItem{item}, nil
}

func fromCache(req provider.FetchRequest, cached func(string, int64, provider.WorkItem, ...provider.WorkItem) *provider.OrchestrationItem) ([]*provider.OrchestrationItem, error) {
	const op = "fetch cached turn"
	last := req.Deliver[len(req.Deliver)-1]
	switch {
	case !req.FromCache || req.Instance == "":
		return nil, encode.Invalid(op, req.Instance, "Deliver asks the cache for a named instance: FromCache and Instance are required")
	case req.Max < 1:
		return nil, encode.Invalid(op, req.Instance, "max must be at least 1, got %d", req.Max)
	case last.Instance != req.Instance:
		return nil, encode.Invalid(op, req.Instance, "the message to deliver is for instance %q", last.Instance)
	}
	turn := cached(req.Instance, last.ExecutionID, last, req.Deliver[:len(req.Deliver)-1]...)
	if turn == nil {
		return nil, nil
	}
	return []*provider.OrchestrationItem{turn}, nil
}
