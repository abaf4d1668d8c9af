package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/sqlite"
)

// BenchmarkListFirstPage is the first page of `duroxide list` over 100,000
// instances (1 in 50 running, none terminated): unfiltered, by status, by ID prefix, and by a status none has (the whole table read).
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
	for _, bc := range []struct {
		name  string
		req   provider.ListRequest
		empty bool
	}{
		{name: "all", req: provider.ListRequest{}},
		{name: "running", req: provider.ListRequest{Status: provider.StatusRunning}},
		{name: "prefix", req: provider.ListRequest{IDPrefix: "bench-9999"}},
		{name: "no-match", req: provider.ListRequest{Status: provider.StatusTerminated}, empty: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				page, err := p.ListInstances(b.Context(), bc.req)
				if err != nil || (len(page.Instances) == 0) != bc.empty {
					b.Fatalf("%d instances, %v", len(page.Instances), err)
				}
			}
		})
	}
}
