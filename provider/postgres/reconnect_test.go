package postgres_test

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// When the listener's connection breaks (a database restart ends every
// session), the provider reconnects within about a second and reports it, so
// dispatchers in backoff resume at once.
func listenerReconnectReported(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t).(*postgres.Provider)
	time.Sleep(300 * time.Millisecond) // the listener's first connection
	reconnected := p.Reconnected()
	var ended int
	err := p.Pool().QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query LIKE 'LISTEN %' AND query LIKE '%' || $1 || '_dx_%'`, p.Schema()).Scan(&ended)
	if err != nil || ended == 0 {
		t.Fatalf("terminate the listener's session: %d ended, %v", ended, err)
	}
	select {
	case <-reconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconnection reported within 10s of the listener's session ending")
	}
	var _ provider.Reconnector = p
}
