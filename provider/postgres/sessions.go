package postgres

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"
)

// Fetches claim sessions in dx_fetch_work_item; acks and renewals of their
// items note their activity.

// RenewSessions implements provider.Sessions.
func (p *Provider) RenewSessions(ctx context.Context, req provider.RenewSessionsRequest) (int, error) {
	if err := req.Validate(); err != nil {
		return 0, err
	}
	n, err := queries.SessionsRenew(ctx, p.pool, dbsqlc.SessionsRenewParams{WorkerID: req.WorkerID,
		ExtendMs: req.ExtendFor.Milliseconds(), IdleMs: req.IdleAfter.Milliseconds()})
	return int(n), classify("renew sessions", "", err)
}

// ReleaseSessions implements provider.Sessions.
func (p *Provider) ReleaseSessions(ctx context.Context, req provider.WorkerRequest) (int, error) {
	if req.ID == "" {
		return 0, encode.Invalid("release sessions", "", "a worker ID is required")
	}
	n, err := queries.SessionsRelease(ctx, p.pool, req.ID)
	if err == nil && n > 0 {
		p.announce(workerChannel) // their items are free for other workers
	}
	return int(n), classify("release sessions", "", err)
}

// CleanupSessions implements provider.Sessions.
func (p *Provider) CleanupSessions(ctx context.Context) (int, error) {
	n, err := queries.SessionsCleanup(ctx, p.pool)
	return int(n), classify("clean up sessions", "", err)
}
