package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// The tests need a server: `make test` starts a throwaway one
// (hack/test-postgres.sh); DUROXIDE_TEST_POSTGRES_URL points at any other.
func TestMain(m *testing.M) {
	if os.Getenv("DUROXIDE_TEST_POSTGRES_URL") == "" {
		fmt.Fprintln(os.Stderr, "provider/postgres tests need PostgreSQL: run them with `make test`, "+
			"or `hack/test-postgres.sh run go test ./provider/postgres/`, or set DUROXIDE_TEST_POSTGRES_URL")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func testURL() string { return os.Getenv("DUROXIDE_TEST_POSTGRES_URL") }

func randomSchema() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "t_" + hex.EncodeToString(b)
}

// schemaFactory gives each case a schema of its own, dropped afterwards.
type schemaFactory struct{}

func (schemaFactory) NewProvider(t testing.TB) provider.Provider {
	p := openSchema(t, randomSchema())
	t.Cleanup(func() { _ = p.DropSchema(context.Background()) })
	return p
}

func (schemaFactory) OpenPeer(t testing.TB, p provider.Provider) provider.Provider {
	return openSchema(t, p.(*postgres.Provider).Schema())
}

func openSchema(t testing.TB, schema string) *postgres.Provider {
	t.Helper()
	p, err := postgres.Open(t.Context(), testURL(), postgres.Options{Schema: schema, MaxConns: 4, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("open schema %s: %v", schema, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func (schemaFactory) CorruptHistoryEvent(t testing.TB, p provider.Provider, instance string, executionID, eventID int64) {
	corrupt(t, p, `UPDATE history SET event_data = '{not json' WHERE instance_id = $1 AND execution_id = $2 AND event_id = $3`,
		instance, executionID, eventID)
}

func (schemaFactory) CorruptOrchestratorMessages(t testing.TB, p provider.Provider, instance string) {
	corrupt(t, p, `UPDATE orchestrator_queue SET work_item = '{"kind":' WHERE instance_id = $1`, instance)
}

func (schemaFactory) CorruptWorkItems(t testing.TB, p provider.Provider, instance string) {
	corrupt(t, p, `UPDATE worker_queue SET work_item = 'garbage' WHERE instance_id = $1`, instance)
}

func corrupt(t testing.TB, p provider.Provider, query string, args ...any) {
	t.Helper()
	tag, err := p.(*postgres.Provider).Pool().Exec(t.Context(), query, args...)
	if err != nil {
		t.Fatalf("corrupt rows: %v", err)
	}
	if tag.RowsAffected() == 0 {
		t.Fatalf("corrupt rows: no row matched %v", args)
	}
}

func TestConformance(t *testing.T) {
	providertest.Run(t, schemaFactory{})
}
