package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	migrations "github.com/duroxide/duroxide-go/provider/internal/migrate"
)

// MigrateDownTo rolls the provider's schema back to migration version (0:
// nothing left), for tests of the down migrations: each Down section, newest
// first, with its version row deleted in the same transaction.
func (p *Provider) MigrateDownTo(ctx context.Context, version int64) error {
	all, err := loadMigrations()
	if err != nil {
		return err
	}
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	applied, err := appliedMigrations(ctx, conn.Conn())
	if err != nil {
		return err
	}
	for _, m := range migrations.Above(all, applied, version) {
		if err := runMigration(ctx, conn.Conn(), m.File, m.Down, "DELETE FROM "+migrations.VersionTable+" WHERE version_id = $1", m.Version); err != nil {
			return err
		}
	}
	return nil
}

// SetCommitLeaders sets how many batches the commit group may have in
// flight (tests that count batches use 1).
func (p *Provider) SetCommitLeaders(n int) {
	p.commits.SetMaxLeaders(n)
}

// HoldCommits occupies a commit group leader until release is called: with
// one leader allowed, the acks queued meanwhile are sent as one batch.
func (p *Provider) HoldCommits(ctx context.Context) (release func() error) {
	started, gate, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- p.commit(ctx, commitWork{before: statements{
			queue: func(b *pgx.Batch) {
				close(started)
				<-gate
				b.Queue(`SELECT 1`)
			},
			read: func(br pgx.BatchResults) error { _, err := br.Exec(); return err },
		}})
	}()
	<-started
	return func() error { close(gate); return <-done }
}

// CommitsWaiting is how many acks wait for the commit group's leader.
func (p *Provider) CommitsWaiting() int { return p.commits.Len() }

// CommitBatches is how many batches the commit group has sent.
func (p *Provider) CommitBatches() int64 { return p.commitBatches.Load() }

// FunctionsHash is the SHA-256 of this build's functions.sql.
func FunctionsHash() string { return thisRelease.hash }

// FunctionsGeneration is the generation of this build's functions.sql.
func FunctionsGeneration() int64 { return thisRelease.generation }

// FunctionsSQL is this build's functions.sql.
func FunctionsSQL() string { return functionsSQL }

// ApplyFunctions applies sql (a functions.sql with its generation line) to
// the provider's schema as a process of that build would on start-up.
func (p *Provider) ApplyFunctions(ctx context.Context, sql string) error {
	return applyFunctions(ctx, p.pool, migrationLockID(p.schema), releaseOf(sql), slog.New(slog.DiscardHandler))
}

// CommitSends is how many transactions the commit group has sent: its
// batches, and the acks of failed batches sent again alone.
func (p *Provider) CommitSends() int64 { return p.commitSends.Load() }

// NoteTimer notes a timer of instance due at at, as an ack queuing it would,
// with the look for ready work leaving out instances whose timers fall due
// within lead.
func (p *Provider) NoteTimer(instance string, at time.Time, lead time.Duration) {
	p.eng.Due.SetScanLead(lead)
	p.eng.Due.NoteTimer(instance, at, "")
}
