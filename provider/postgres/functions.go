package postgres

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// functionsSQL holds every SQL function of the store. Unlike the numbered
// migrations it is applied whole, over an older generation: a function's
// history lives in git, not in a chain of Down sections restoring old
// bodies.
//
//go:embed functions.sql
var functionsSQL string

// functionsRelease is one version of functions.sql: its generation (the
// number on its first line) and its SHA-256.
type functionsRelease struct {
	generation int64
	hash       string
	sql        string
}

// thisRelease is this build's functions.sql.
var thisRelease = releaseOf(functionsSQL)

var generationLine = regexp.MustCompile(`^-- duroxide:generation (\d+)\n`)

// releaseOf reads a functions.sql. A file without its generation line is a
// build defect: it panics at start-up (and in every test).
func releaseOf(sql string) functionsRelease {
	m := generationLine.FindStringSubmatch(sql)
	if m == nil {
		panic("functions.sql does not start with its `-- duroxide:generation N` line")
	}
	gen, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		panic("functions.sql generation: " + err.Error())
	}
	sum := sha256.Sum256([]byte(sql))
	return functionsRelease{generation: gen, hash: hex.EncodeToString(sum[:]), sql: sql}
}

// applied is what the schema records of the functions it holds.
type applied struct {
	generation int64
	hash       string
}

// supersedes reports whether r replaces what the schema holds:
//   - an older generation (or none) is replaced;
//   - a newer one is kept: an older process restarting during a rolling
//     upgrade runs against the newer functions, never downgrades them;
//   - the same generation is replaced only by another file (a schema used
//     during development), and left alone by the same one.
func (r functionsRelease) supersedes(a applied) bool {
	if r.generation != a.generation {
		return r.generation > a.generation
	}
	return r.hash != a.hash
}

// applyFunctions runs the release's functions.sql when it supersedes what
// the schema holds, in one transaction under the migration lock, so
// processes starting together apply it once and a concurrent caller sees
// either the old functions or the new, never none.
func applyFunctions(ctx context.Context, pool *pgxpool.Pool, lockID int64, r functionsRelease, log *slog.Logger) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("apply SQL functions: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockID); err != nil {
		return fmt.Errorf("apply SQL functions: lock: %w", err)
	}
	var cur applied
	err = tx.QueryRow(ctx, "SELECT generation, sha256 FROM schema_functions").Scan(&cur.generation, &cur.hash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("apply SQL functions: read applied generation: %w", err)
	}
	if !r.supersedes(cur) {
		if cur.generation > r.generation {
			log.Info("the schema's SQL functions are newer than this build's; keeping them",
				"schema_generation", cur.generation, "build_generation", r.generation)
		}
		return nil
	}
	// No arguments: pgx sends the file with the simple protocol, which runs
	// several statements.
	if _, err := tx.Exec(ctx, r.sql); err != nil {
		return fmt.Errorf("apply SQL functions (functions.sql): %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO schema_functions (singleton, sha256, generation) VALUES (TRUE, $1, $2)
		ON CONFLICT (singleton) DO UPDATE SET sha256 = EXCLUDED.sha256, generation = EXCLUDED.generation, applied_at = now()`,
		r.hash, r.generation); err != nil {
		return fmt.Errorf("apply SQL functions: record generation: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("apply SQL functions: commit: %w", err)
	}
	return nil
}
