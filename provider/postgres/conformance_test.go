package postgres_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// The tests need a server: `make test` starts a throwaway one
// (hack/test-postgres.sh); DUROXIDE_TEST_POSTGRES_URL points at any other.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Fprintln(os.Stderr, "skipping provider/postgres under -short: it needs PostgreSQL (run `make test`)")
		_ = flag.Set("test.run", "^$")
		os.Exit(m.Run())
	}
	if os.Getenv(pgtest.EnvURL) == "" {
		fmt.Fprintln(os.Stderr, "provider/postgres tests need PostgreSQL: run them with `make test`, "+
			"or `hack/test-postgres.sh run go test ./provider/postgres/`, or set "+pgtest.EnvURL)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func testURL() string { return os.Getenv(pgtest.EnvURL) }

// schemaFactory gives each case a schema of its own, dropped afterwards.
type schemaFactory struct{}

func (schemaFactory) NewProvider(t testing.TB) provider.Provider { return pgtest.Open(t) }

func (schemaFactory) OpenPeer(t testing.TB, p provider.Provider) provider.Provider {
	return pgtest.OpenSchema(t, p.(*postgres.Provider).Schema())
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
