package sqlite

import (
	"context"

	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// Empty polls must not take the write lock: a process frozen while holding
// it (SIGSTOP, a debugger) would stop every process sharing the file, idle
// ones included. A read (WAL readers never wait for the writer) says whether
// a fetch can find anything; only then does the fetch take the write lock.
// A read error falls through to the fetch, which reports it.

// orchestrationReady reports whether some instance caps admits has a
// visible message and no live lock.
func (p *Provider) orchestrationReady(ctx context.Context, caps capabilityFilter) bool {
	ready, err := queries.OrchestratorReady(ctx, p.stmts, dbsqlc.OrchestratorReadyParams{Now: nowMs(), CapKeys: caps.keys, CapNames: caps.names})
	return err != nil || ready
}

// workReady reports whether an activity f takes is visible and not leased.
func (p *Provider) workReady(ctx context.Context, f workFilter) bool {
	ready, err := queries.WorkItemReady(ctx, p.stmts, dbsqlc.WorkItemReadyParams{Now: nowMs(), AnyTag: f.any, Untagged: f.untagged, Tags: f.tags,
		WorkerID: f.worker(), Room: f.sessions != nil}) // as if it had room: a false "ready" costs a look that finds nothing
	return err != nil || ready
}
