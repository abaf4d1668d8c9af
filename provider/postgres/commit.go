package postgres

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/commit"
)

// claimFor is how long a commit locks an instance it holds no lock on (a
// first turn's, a cached turn's): the lock is taken and released in the
// commit's transaction, so it only needs to outlast that transaction.
const claimFor = time.Minute

// Commit implements provider.Provider: the shared router picks the path.
func (p *Provider) Commit(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	return commit.Route(ctx, req, paths{p})
}

// paths are the store's commit paths (commit.Paths), as the router calls
// them.
type paths struct{ p *Provider }
