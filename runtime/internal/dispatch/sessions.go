package dispatch

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Activity sessions (provider.Sessions): this runtime's activity fetches
// take session items as WorkerID, and a loop renews the sessions it owns
// while they see work. A session idle for SessionIdleTimeout is not
// renewed: it lapses and frees its slot (MaxSessions). A clean shutdown
// releases them all, so other workers take them over at once.

// sessionConfig is what this runtime's activity fetches take of sessions:
// nil when it takes none (MaxSessions < 0).
func (r *Dispatcher) sessionConfig() *provider.SessionConfig {
	if r.opts.MaxSessions < 0 {
		return nil
	}
	return &provider.SessionConfig{WorkerID: r.opts.WorkerID, LockFor: r.opts.SessionLockTimeout, MaxSessions: r.opts.MaxSessions}
}

// keepSessions renews this runtime's sessions every third of their lease,
// and forgets lapsed sessions without work (any process may) every
// SessionIdleTimeout, until ctx ends. Failures are logged and retried: a
// session that lapses meanwhile moves to another worker, which is what a
// session promises on failure.
func (r *Dispatcher) keepSessions(ctx context.Context) {
	renew := time.NewTicker(r.opts.SessionLockTimeout / 3)
	defer renew.Stop()
	cleanup := time.NewTicker(r.opts.SessionIdleTimeout)
	defer cleanup.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			_, err := r.p.RenewSessions(ctx, provider.RenewSessionsRequest{WorkerID: r.opts.WorkerID,
				ExtendFor: r.opts.SessionLockTimeout, IdleAfter: r.opts.SessionIdleTimeout})
			if err != nil && ctx.Err() == nil {
				r.opts.Logger.Warn("renewing activity sessions failed", "worker", r.opts.WorkerID, "error", err)
			}
		case <-cleanup.C:
			if _, err := r.p.CleanupSessions(ctx); err != nil && ctx.Err() == nil {
				r.opts.Logger.Warn("cleaning up activity sessions failed", "error", err)
			}
		}
	}
}

// releaseSessions ends this runtime's sessions at a clean shutdown.
func (r *Dispatcher) releaseSessions(ctx context.Context) {
	if r.opts.MaxSessions < 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := r.p.ReleaseSessions(ctx, provider.WorkerRequest{ID: r.opts.WorkerID}); err != nil {
		r.opts.Logger.Warn("releasing activity sessions failed; they lapse with their leases", "worker", r.opts.WorkerID, "error", err)
	}
}
