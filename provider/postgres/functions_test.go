package postgres_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
)

// TestFunctionsAppliedOnlyWhenChanged opens a schema again with the same
// functions.sql (nothing is touched: a function made by hand survives) and
// with an older one recorded (the file is applied whole: the stray function is
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

	exec(`UPDATE schema_functions SET sha256 = 'an older file', generation = generation - 1`)
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

// TestFunctionsGenerationRecorded holds functions.sql's generation to its
// content: a changed file must carry a new generation, or processes with
// the old file and the new would each take the other's for the same.
func TestFunctionsGenerationRecorded(t *testing.T) {
	const record = "testdata/functions_generation.txt"
	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var gen int64
	var hash string
	if _, err := fmt.Sscanf(string(raw), "%d %s", &gen, &hash); err != nil {
		t.Fatalf("%s: %v", record, err)
	}
	switch {
	case gen == postgres.FunctionsGeneration() && hash != postgres.FunctionsHash():
		t.Errorf("functions.sql changed but its generation is still %d: raise `-- duroxide:generation` to %d and write %q to %s",
			gen, gen+1, fmt.Sprintf("%d %s", gen+1, postgres.FunctionsHash()), record)
	case gen != postgres.FunctionsGeneration() || hash != postgres.FunctionsHash():
		t.Errorf("%s records generation %d (%s); functions.sql is generation %d: write %q to it",
			record, gen, hash, postgres.FunctionsGeneration(), fmt.Sprintf("%d %s", postgres.FunctionsGeneration(), postgres.FunctionsHash()))
	}
}

// TestOlderFunctionsNeverReplaceNewer plays a rolling upgrade: a newer build
// applies its functions.sql (generation+1, with a function of its own), then
// a process of this build restarts on the schema, then one of an older
// build: neither touches the newer functions. A build of the same
// generation with another file (a development schema) does apply its own.
func TestOlderFunctionsNeverReplaceNewer(t *testing.T) {
	schema := pgtest.RandomSchema()
	p := pgtest.OpenSchema(t, schema)
	defer func() { _ = p.DropSchema(context.Background()) }()
	ctx := t.Context()
	gen := postgres.FunctionsGeneration()
	release := func(g int64, extra string) string {
		return regexp.MustCompile(`^-- duroxide:generation \d+\n`).
			ReplaceAllString(postgres.FunctionsSQL(), fmt.Sprintf("-- duroxide:generation %d\n", g)) + extra
	}
	recorded := func() int64 {
		t.Helper()
		var g int64
		if err := p.Pool().QueryRow(ctx, `SELECT generation FROM schema_functions`).Scan(&g); err != nil {
			t.Fatal(err)
		}
		return g
	}

	newer := release(gen+1, "\nCREATE FUNCTION dx_newer() RETURNS INT LANGUAGE sql AS 'SELECT 1';\n")
	if err := p.ApplyFunctions(ctx, newer); err != nil {
		t.Fatal(err)
	}
	if !functionExists(t, p, schema, "dx_newer") || recorded() != gen+1 {
		t.Fatalf("the newer generation was not applied (generation %d)", recorded())
	}

	again, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{Schema: schema, MaxConns: 2})
	if err != nil {
		t.Fatalf("reopen with this build: %v", err)
	}
	_ = again.Close()
	if err := p.ApplyFunctions(ctx, release(gen-1, "\n-- an older file\n")); err != nil {
		t.Fatal(err)
	}
	if !functionExists(t, p, schema, "dx_newer") || recorded() != gen+1 {
		t.Errorf("an older build replaced generation %d: dx_newer present %v, generation now %d",
			gen+1, functionExists(t, p, schema, "dx_newer"), recorded())
	}
	createInstance(t, p, "under-newer-functions")

	sameGeneration := strings.Replace(newer, "dx_newer", "dx_other", 1)
	if err := p.ApplyFunctions(ctx, sameGeneration); err != nil {
		t.Fatal(err)
	}
	if functionExists(t, p, schema, "dx_newer") || !functionExists(t, p, schema, "dx_other") {
		t.Error("another file of the same generation was not applied")
	}
}
