package sqlite

import (
	"context"
)

// Empty polls must not take the write lock: a process frozen while holding
// it (SIGSTOP, a debugger) would stop every process sharing the file, idle
// ones included. A read (WAL readers never wait for the writer) says whether
// a fetch can find anything; only then does the fetch take the write lock.
// A read error falls through to the fetch, which reports it.

// orchestrationReady reports whether some instance has a visible message and
// no live lock.
func (p *Provider) orchestrationReady(ctx context.Context) bool {
	now := nowMs()
	var ready bool
	err := p.stmts.queryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM orchestrator_queue q
			LEFT JOIN instance_locks l ON l.instance_id = q.instance_id
			WHERE q.visible_at <= ? AND (l.instance_id IS NULL OR l.locked_until <= ?))`, now, now).Scan(&ready)
	return err != nil || ready
}

// workReady reports whether an activity is visible and not leased.
func (p *Provider) workReady(ctx context.Context) bool {
	now := nowMs()
	var ready bool
	err := p.stmts.queryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM worker_queue
			WHERE visible_at <= ? AND (lock_token IS NULL OR locked_until <= ?))`, now, now).Scan(&ready)
	return err != nil || ready
}
