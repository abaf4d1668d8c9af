package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate creates the schema (unless it must exist), applies pending migrations
// and then functions.sql when it changed. Many processes
// (a WorkerPool's pods) start at once: a transaction-scoped advisory lock
// serialises schema creation, and a session-scoped one the migrations, so
// each process waits its turn instead of racing on CREATE.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, mustExist bool, log *slog.Logger) error {
	lockID := migrationLockID(schema)
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
		return fmt.Errorf("lock schema creation: %w", err)
	}
	if mustExist {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
			return fmt.Errorf("look up schema: %w", err)
		}
		if !exists {
			return ErrSchemaNotFound
		}
	}
	if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+quoteIdent(schema)); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}

	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	mp, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(blockingLocker{id: lockID}))
	if err != nil {
		return err
	}
	if _, err := mp.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return applyFunctions(ctx, pool, lockID, thisRelease, log)
}

func migrationLockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("duroxide-go/migrate/" + schema))
	return int64(h.Sum64())
}

// blockingLocker is a goose session locker that waits on pg_advisory_lock.
// goose's own Postgres locker polls with pg_try_advisory_lock every few
// seconds, which makes twenty pods starting together queue for a minute.
type blockingLocker struct{ id int64 }

func (l blockingLocker) SessionLock(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", l.id)
	return err
}

func (l blockingLocker) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	_, err := conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", l.id)
	return err
}
