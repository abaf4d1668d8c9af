// Package fetch serves a provider.FetchRequest with a store's two ways of
// locking turns: any ready instances, or one named instance. It holds what
// the request means, so each store implements only the two lookups.
//
// It imports provider and provider/internal/encode only.
package fetch

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// Ready locks the turns of up to max ready instances, waiting up to pollFor;
// fromCache as provider.FetchRequest.FromCache.
type Ready func(ctx context.Context, max int, lockFor, pollFor time.Duration, fromCache bool) ([]*provider.OrchestrationItem, error)

// Named locks the one named instance's turn, or returns nil without waiting.
type Named func(ctx context.Context, instance string, lockFor time.Duration) (*provider.OrchestrationItem, error)

// Route answers req with ready or named.
func Route(ctx context.Context, req provider.FetchRequest, ready Ready, named Named) ([]*provider.OrchestrationItem, error) {
	if req.Instance == "" {
		return ready(ctx, req.Max, req.LockFor, req.PollFor, req.FromCache)
	}
	if req.Max < 1 {
		return nil, encode.Invalid("fetch instance item", req.Instance, "max must be at least 1, got %d", req.Max)
	}
	item, err := named(ctx, req.Instance, req.LockFor)
	if err != nil || item == nil {
		return nil, err
	}
	return []*provider.OrchestrationItem{item}, nil
}
