package postgres

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// functionsSQL holds every SQL function of the store. Unlike the numbered
// migrations it is applied whole, whenever it differs from what the schema
// last got: a function's history lives in git, not in a chain of Down
// sections restoring old bodies.
//
//go:embed functions.sql
var functionsSQL string

// functionsHash identifies this build's functions.sql.
var functionsHash = func() string {
	sum := sha256.Sum256([]byte(functionsSQL))
	return hex.EncodeToString(sum[:])
}()

// applyFunctions runs functions.sql when the schema records another hash (or
// none), in one transaction under the migration lock, so processes starting
// together apply it once and a concurrent caller sees either the old functions
// or the new, never none.
func applyFunctions(ctx context.Context, pool *pgxpool.Pool, lockID int64) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("apply SQL functions: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
		return fmt.Errorf("apply SQL functions: lock: %w", err)
	}
	var current string
	err = tx.QueryRow(ctx, "SELECT sha256 FROM schema_functions").Scan(&current)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("apply SQL functions: read applied hash: %w", err)
	}
	if current == functionsHash {
		return nil
	}
	// No arguments: pgx sends the file with the simple protocol, which runs
	// several statements.
	if _, err := tx.Exec(ctx, functionsSQL); err != nil {
		return fmt.Errorf("apply SQL functions (functions.sql): %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO schema_functions (singleton, sha256) VALUES (TRUE, $1)
		ON CONFLICT (singleton) DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = now()`, functionsHash); err != nil {
		return fmt.Errorf("apply SQL functions: record hash: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("apply SQL functions: commit: %w", err)
	}
	return nil
}
