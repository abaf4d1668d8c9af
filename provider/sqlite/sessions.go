package sqlite

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// Fetches claim sessions in lockWorkItem; acks and renewals of their items
// note their activity (SessionTouch).

// RenewSessions implements provider.Sessions.
func (p *Provider) RenewSessions(ctx context.Context, req provider.RenewSessionsRequest) (int, error) {
	if err := req.Validate(); err != nil {
		return 0, err
	}
	var n int64
	err := p.writeTx(ctx, "renew sessions", func(tx *txn) error {
		now := nowMs()
		var err error
		n, err = queries.SessionsRenew(ctx, tx, dbsqlc.SessionsRenewParams{LockedUntil: now + req.ExtendFor.Milliseconds(),
			WorkerID: req.WorkerID, Now: now, ActiveSince: now - req.IdleAfter.Milliseconds()})
		return err
	})
	return int(n), err
}

// ReleaseSessions implements provider.Sessions.
func (p *Provider) ReleaseSessions(ctx context.Context, req provider.WorkerRequest) (int, error) {
	if req.ID == "" {
		return 0, encode.Invalid("release sessions", "", "a worker ID is required")
	}
	var n int64
	err := p.writeTx(ctx, "release sessions", func(tx *txn) error {
		var err error
		n, err = queries.SessionsRelease(ctx, tx, req.ID)
		return err
	})
	if err == nil && n > 0 {
		p.eng.WorkerWork.Notify() // their items are free for other workers
	}
	return int(n), err
}

// CleanupSessions implements provider.Sessions.
func (p *Provider) CleanupSessions(ctx context.Context) (int, error) {
	var n int64
	err := p.writeTx(ctx, "clean up sessions", func(tx *txn) error {
		var err error
		n, err = queries.SessionsCleanup(ctx, tx, nowMs())
		return err
	})
	return int(n), err
}
