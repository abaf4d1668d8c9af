package sqlite

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider/providertest"
)

// BenchmarkTimerTurns: the store's cost of a timer orchestration's two
// turns, on a file store with default options (go test -bench TimerTurns).
func BenchmarkTimerTurns(b *testing.B) {
	p, err := Open(b.Context(), b.TempDir()+"/bench.db", Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	providertest.BenchmarkTimerTurns(b, p)
}
