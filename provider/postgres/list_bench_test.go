package postgres_test

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
)

// BenchmarkListFirstPage: ListInstances' first page (the default 100,
// newest first) and a page filtered by status, over 100,000 instances
// (go test -bench ListFirstPage -run XXX ./provider/postgres/ with
// DUROXIDE_TEST_POSTGRES_URL set). One in 50 instances runs; the rest are
// completed; none is terminated (no-match reads them all).
func BenchmarkListFirstPage(b *testing.B) {
	p := pgtest.Open(b)
	const fill = `
		WITH g AS (SELECT n FROM generate_series(1, 100000) n)
		, i AS (INSERT INTO instances (instance_id, orchestration_name, created_at, updated_at)
		        SELECT 'bench-' || n, 'Bench', now() - n * interval '1 second', now() FROM g)
		INSERT INTO executions (instance_id, execution_id, status, output)
		SELECT 'bench-' || n, 1, CASE WHEN n % 50 = 0 THEN 'Running' ELSE 'Completed' END, '1' FROM g`
	if _, err := p.Pool().Exec(b.Context(), fill); err != nil {
		b.Fatal(err)
	}
	if _, err := p.Pool().Exec(b.Context(), `ANALYZE instances; ANALYZE executions`); err != nil {
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
