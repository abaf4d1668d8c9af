package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate applies pending schema migrations. When another process migrates the
// same file at the same moment, one of the two loses the race on CREATE TABLE;
// the loser succeeds if the winner left nothing pending.
func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	mp, err := goose.NewProvider(goose.DialectSQLite3, db, fsys)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, upErr := mp.Up(ctx); upErr != nil {
		pending, err := mp.HasPending(ctx)
		if err != nil || pending {
			return fmt.Errorf("apply migrations: %w", upErr)
		}
	}
	return nil
}
