// Package pgtest gives tests a PostgreSQL provider on a schema of its own.
//
// The server comes from DUROXIDE_TEST_POSTGRES_URL; `make test` starts a
// throwaway one (hack/test-postgres.sh) and sets it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider/postgres"
)

// EnvURL names the variable holding the test server's connection string.
const EnvURL = "DUROXIDE_TEST_POSTGRES_URL"

// URL returns the test server's connection string, failing the test with
// instructions when none is configured. Under -short (the SQLite-only
// contributor loop) the test is skipped, with that reason.
func URL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs PostgreSQL: skipped under -short (run `make test` for everything)")
	}
	url := os.Getenv(EnvURL)
	if url == "" {
		t.Fatalf("this test needs PostgreSQL: run it through `make test` or `hack/test-postgres.sh run go test ...`, or set %s", EnvURL)
	}
	return url
}

// RandomSchema returns a fresh schema name.
func RandomSchema() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "t_" + hex.EncodeToString(b)
}

// Open returns a provider on a new schema that is dropped when the test ends.
func Open(t testing.TB) *postgres.Provider {
	t.Helper()
	p := OpenSchema(t, RandomSchema())
	t.Cleanup(func() { _ = p.DropSchema(context.Background()) })
	return p
}

// OpenSchema returns a provider on schema, closed when the test ends.
func OpenSchema(t testing.TB, schema string) *postgres.Provider {
	t.Helper()
	p, err := postgres.Open(t.Context(), URL(t), postgres.Options{Schema: schema, MaxConns: 4, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("open schema %s: %v", schema, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}
