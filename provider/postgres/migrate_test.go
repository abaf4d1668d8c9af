package postgres_test

import (
	"context"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
)

// TestMigrationsDownAndUp rolls every migration back and applies them again:
// each Down undoes its Up (the first one's also removes the functions), so a
// schema can be downgraded step by step and upgraded again, and a turn still
// runs on the result.
func TestMigrationsDownAndUp(t *testing.T) {
	schema := pgtest.RandomSchema()
	p := pgtest.OpenSchema(t, schema)
	createInstance(t, p, "before")
	if err := p.MigrateDownTo(t.Context(), 0); err != nil {
		t.Fatalf("migrate down to nothing: %v", err)
	}
	var tables int
	if err := p.Pool().QueryRow(t.Context(),
		`SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename <> 'goose_db_version'`, schema).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("tables left after migrating down: %d (%v), want 0", tables, err)
	}
	var functions int
	if err := p.Pool().QueryRow(t.Context(),
		`SELECT count(*) FROM pg_proc WHERE pronamespace = $1::regnamespace`, schema).Scan(&functions); err != nil || functions != 0 {
		t.Fatalf("functions left after migrating down: %d (%v), want 0", functions, err)
	}
	p.Close()
	again, err := postgres.Open(t.Context(), pgtest.URL(t), postgres.Options{Schema: schema, MaxConns: 2})
	if err != nil {
		t.Fatalf("migrate up again: %v", err)
	}
	defer again.Close()
	defer func() { _ = again.DropSchema(context.Background()) }()
	createInstance(t, again, "after")
	info, err := again.GetInstanceInfo(t.Context(), provider.InstanceRequest{Instance: "after"})
	if err != nil || info.Status != provider.StatusRunning {
		t.Fatalf("instance after migrating down and up: %+v %v", info, err)
	}
}
