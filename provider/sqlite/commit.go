package sqlite

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/commit"
)

// Commit implements provider.Provider: the shared router picks the path.
func (p *Provider) Commit(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	return commit.Route(ctx, req, paths{p})
}

// paths are the store's commit paths, as the router calls them.
type paths struct{ p *Provider }

func (c paths) Turn(ctx context.Context, token string, ack provider.OrchestrationAck) error {
	return c.p.commitTurn(ctx, token, ack)
}

func (c paths) TurnLeasing(ctx context.Context, token string, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) ([]*provider.WorkItemLease, error) {
	return c.p.commitTurnLeasing(ctx, token, ack, lease, leaseFor)
}

func (c paths) TurnNext(ctx context.Context, instance, token string, ack provider.OrchestrationAck, lease []int, leaseFor, lockFor time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error) {
	return c.p.commitTurnNext(ctx, instance, token, ack, lease, leaseFor, lockFor)
}

func (c paths) FirstTurn(ctx context.Context, instance string, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) (bool, []*provider.WorkItemLease, error) {
	return c.p.commitFirstTurn(ctx, instance, ack, lease, leaseFor)
}

func (c paths) CachedTurn(ctx context.Context, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) ([]*provider.WorkItemLease, error) {
	return c.p.commitCachedTurn(ctx, workToken, turn, ack, lease, leaseFor)
}

func (c paths) Activity(ctx context.Context, token string, result *provider.WorkItem) error {
	return c.p.ackActivity(ctx, token, result)
}

func (c paths) ActivityQuietly(ctx context.Context, token string, result provider.WorkItem, lastEvent int64) (bool, error) {
	return c.p.ackActivityQuietly(ctx, token, result, lastEvent)
}

func (c paths) ActivityNext(ctx context.Context, token string, result provider.WorkItem, lockFor time.Duration) (*provider.OrchestrationItem, error) {
	return c.p.ackActivityNext(ctx, token, result, lockFor)
}
