package postgres_test

import (
	"context"
	"testing"

	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
)

// TestFunctionsAppliedOnlyWhenChanged opens a schema again with the same
// functions.sql (nothing is touched: a function made by hand survives) and
// with another recorded (the file is applied whole: the stray function is
// dropped, a missing one is back, the hash is this build's).
func TestFunctionsAppliedOnlyWhenChanged(t *testing.T) {
	schema := pgtest.RandomSchema()
	p := pgtest.OpenSchema(t, schema)
	defer func() { _ = p.DropSchema(context.Background()) }()
	ctx := t.Context()
	exec := func(sql string) {
		t.Helper()
		if _, err := p.Pool().Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`CREATE FUNCTION dx_stray() RETURNS INT LANGUAGE sql AS 'SELECT 1'`)

	reopen := func() {
		t.Helper()
		again, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{Schema: schema, MaxConns: 2})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		_ = again.Close()
	}
	reopen()
	if !functionExists(t, p, schema, "dx_stray") {
		t.Fatal("functions were applied again although functions.sql did not change")
	}

	exec(`UPDATE schema_functions SET sha256 = 'an older file'`)
	exec(`DROP FUNCTION dx_held_instance(TEXT)`)
	reopen()
	if functionExists(t, p, schema, "dx_stray") {
		t.Error("a changed hash did not apply functions.sql: dx_stray is still there")
	}
	if !functionExists(t, p, schema, "dx_held_instance") {
		t.Error("a changed hash did not apply functions.sql: dx_held_instance is missing")
	}
	var hash string
	if err := p.Pool().QueryRow(ctx, `SELECT sha256 FROM schema_functions`).Scan(&hash); err != nil || hash != postgres.FunctionsHash() {
		t.Errorf("recorded hash %q (%v), want %q", hash, err, postgres.FunctionsHash())
	}
	createInstance(t, p, "after-reapply")
}

func functionExists(t *testing.T, p *postgres.Provider, schema, name string) bool {
	t.Helper()
	var n int
	if err := p.Pool().QueryRow(t.Context(),
		`SELECT count(*) FROM pg_proc WHERE pronamespace = $1::regnamespace AND proname = $2`, schema, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}
