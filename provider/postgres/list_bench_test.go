package postgres_test

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// BenchmarkListFirstPage is providertest.BenchmarkListFirstPage on
// PostgreSQL (go test -bench ListFirstPage -run XXX ./provider/postgres/
// with DUROXIDE_TEST_POSTGRES_URL set).
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
	providertest.BenchmarkListFirstPage(b, p)
}
