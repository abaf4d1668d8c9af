package postgres

import (
	"context"
	"io/fs"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// MigrateDownTo rolls the provider's schema back to migration version (0:
// nothing left), for tests of the down migrations.
func (p *Provider) MigrateDownTo(ctx context.Context, version int64) error {
	fsys, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(p.pool)
	defer db.Close()
	mp, err := goose.NewProvider(goose.DialectPostgres, db, fsys)
	if err != nil {
		return err
	}
	_, err = mp.DownTo(ctx, version)
	return err
}
