// Package fetch serves a provider.FetchRequest with a store's three ways of
// getting turns: any ready instances, one named instance, or a turn built
// from the history cache alone. It holds what the request means, so each
// store implements only the lookups.
//
// It imports provider only.
package fetch

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
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

// Route answers req with the lookup it asks for, once req.Validate passed.
func Route(ctx context.Context, req provider.FetchRequest, l Lookups) ([]*provider.OrchestrationItem, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	switch {
	case len(req.Deliver) > 0:
		return fromCache(req, l.Cached), nil
	case req.Instance == "":
		return l.Ready(ctx, req.Max, req.LockFor, req.PollFor, req.FromCache)
	}
	item, err := l.Named(ctx, req.Instance, req.LockFor)
	if err != nil || item == nil {
		return nil, err
	}
	return []*provider.OrchestrationItem{item}, nil
}

func fromCache(req provider.FetchRequest, cached func(string, int64, provider.WorkItem, ...provider.WorkItem) *provider.OrchestrationItem) []*provider.OrchestrationItem {
	last := req.Deliver[len(req.Deliver)-1]
	turn := cached(req.Instance, last.ExecutionID, last, req.Deliver[:len(req.Deliver)-1]...)
	if turn == nil {
		return nil
	}
	return []*provider.OrchestrationItem{turn}
}
