package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/duroxide/duroxide-go/provider/providertest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
)

// BenchmarkListFirstPage is providertest.BenchmarkListFirstPage on SQLite:
// the first page of `duroxide list` over 100,000 instances.
func BenchmarkListFirstPage(b *testing.B) {
	p, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "list.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	const fill = `
		WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 100000)
		INSERT INTO instances (instance_id, orchestration_name, orchestration_version, current_execution_id, created_at, updated_at)
		SELECT 'bench-' || n, 'Bench', '', 1, 1795000000000 - n * 1000, 1795000000000 FROM g;
		WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 100000)
		INSERT INTO executions (instance_id, execution_id, status, output, started_at)
		SELECT 'bench-' || n, 1, CASE WHEN n % 50 = 0 THEN 'Running' ELSE 'Completed' END, '1', 0 FROM g;
		ANALYZE;`
	if _, err := p.DB().ExecContext(b.Context(), fill); err != nil {
		b.Fatal(err)
	}
	providertest.BenchmarkListFirstPage(b, p)
}
