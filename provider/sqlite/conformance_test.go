package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/providertest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
)

// fileFactory gives each case its own database file, so peers can open it.
type fileFactory struct{}

func (fileFactory) NewProvider(t testing.TB) provider.Provider {
	return open(t, filepath.Join(t.TempDir(), "store.db"))
}

func (fileFactory) OpenPeer(t testing.TB, p provider.Provider) provider.Provider {
	return open(t, p.(*sqlite.Provider).Path())
}

func open(t testing.TB, path string) *sqlite.Provider {
	t.Helper()
	p, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func (fileFactory) CorruptHistoryEvent(t testing.TB, p provider.Provider, instance string, executionID, eventID int64) {
	corrupt(t, p, `UPDATE history SET event_data = '{not json' WHERE instance_id = ? AND execution_id = ? AND event_id = ?`,
		instance, executionID, eventID)
}

func (fileFactory) CorruptOrchestratorMessages(t testing.TB, p provider.Provider, instance string) {
	corrupt(t, p, `UPDATE orchestrator_queue SET work_item = '{"kind":' WHERE instance_id = ?`, instance)
}

func (fileFactory) CorruptWorkItems(t testing.TB, p provider.Provider, instance string) {
	corrupt(t, p, `UPDATE worker_queue SET work_item = 'garbage' WHERE instance_id = ?`, instance)
}

func corrupt(t testing.TB, p provider.Provider, query string, args ...any) {
	t.Helper()
	res, err := p.(*sqlite.Provider).DB().ExecContext(t.Context(), query, args...)
	if err != nil {
		t.Fatalf("corrupt rows: %v", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatalf("corrupt rows: no row matched %v", args)
	}
}

func TestConformance(t *testing.T) {
	providertest.Run(t, fileFactory{})
}
