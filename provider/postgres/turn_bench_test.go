package postgres_test

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// BenchmarkTimerTurns: the store's cost of a timer orchestration's two
// turns, on a schema of its own with default options (go test -bench
// TimerTurns, DUROXIDE_TEST_POSTGRES_URL set).
func BenchmarkTimerTurns(b *testing.B) {
	providertest.BenchmarkTimerTurns(b, pgtest.Open(b))
}
