package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	migrations "github.com/duroxide/duroxide-go/provider/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate applies pending schema migrations in one transaction. It begins
// IMMEDIATE (the store's connections use _txlock=immediate), so a process
// migrating the same file at the same moment waits for this one and then
// finds nothing pending.
func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	all, err := migrations.Load(fsys)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	applied, err := appliedMigrations(ctx, tx)
	if err != nil {
		return err
	}
	for _, m := range migrations.Pending(all, applied) {
		if _, err := tx.ExecContext(ctx, m.Up); err != nil {
			return fmt.Errorf("migration %s: %w", m.File, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+migrations.VersionTable+" (version_id, is_applied) VALUES (?, 1)", m.Version); err != nil {
			return fmt.Errorf("migration %s: record version: %w", m.File, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("apply migrations: commit: %w", err)
	}
	return nil
}

// appliedMigrations creates the version table when missing (with goose's
// row for version 0) and returns the versions it records as applied.
func appliedMigrations(ctx context.Context, tx *sql.Tx) (map[int64]bool, error) {
	if _, err := tx.ExecContext(ctx, `
		CREATE TABLE IF NOT EXISTS `+migrations.VersionTable+` (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			version_id INTEGER NOT NULL,
			is_applied INTEGER NOT NULL,
			tstamp TIMESTAMP DEFAULT (datetime('now')));
		INSERT INTO `+migrations.VersionTable+` (version_id, is_applied)
			SELECT 0, 1 WHERE NOT EXISTS (SELECT 1 FROM `+migrations.VersionTable+`)`); err != nil {
		return nil, fmt.Errorf("apply migrations: version table: %w", err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT version_id FROM "+migrations.VersionTable+" WHERE is_applied AND version_id > 0")
	if err != nil {
		return nil, fmt.Errorf("apply migrations: read versions: %w", err)
	}
	defer func() { _ = rows.Close() }()
	applied := map[int64]bool{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("apply migrations: read versions: %w", err)
		}
		applied[v] = true
	}
	return applied, rows.Err()
}
