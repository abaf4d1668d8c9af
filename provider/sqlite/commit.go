package sqlite

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/commit"
)

// Commit implements provider.Provider: the shared router picks the path.
func (p *Provider) Commit(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	return commit.Route(ctx, req, paths{p})
}

// paths are the store's commit paths (commit.Paths), as the router calls
// them.
type paths struct{ p *Provider }
