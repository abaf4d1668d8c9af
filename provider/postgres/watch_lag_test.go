package postgres_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// A transaction left open anywhere on the server (here: another schema, as
// another pool or a forgotten psql session would) must not hold back status
// reports: the feed reads announced instances directly. Before, every report
// waited for that transaction to end.
func watchNotHeldBackByUnrelatedTransaction(t *testing.T, f providertest.Factory) {
	p := f.NewProvider(t)
	watcher := peerWithSlowPoll(t, p)  // another process on the same schema
	time.Sleep(200 * time.Millisecond) // let its listener connect
	ch, err := watcher.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	other := f.NewProvider(t).(*postgres.Provider)
	blocker, err := other.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Rollback(t.Context()) }()
	if _, err := blocker.Exec(t.Context(), "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}

	const n = 200
	var mu sync.Mutex
	received := map[string]time.Time{}
	all := make(chan struct{})
	go func() {
		for c := range ch {
			mu.Lock()
			if _, seen := received[c.Instance]; !seen {
				received[c.Instance] = time.Now()
				if len(received) == n {
					close(all)
				}
			}
			mu.Unlock()
		}
	}()
	committed := map[string]time.Time{}
	for i := range n {
		id := fmt.Sprintf("i%03d", i)
		createInstance(t, p, id)
		committed[id] = time.Now()
	}
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d of %d status changes reported within 10s while another transaction stayed open", len(received), n)
	}
	mu.Lock()
	defer mu.Unlock()
	var lags []time.Duration
	for id, at := range received {
		lags = append(lags, max(at.Sub(committed[id]), 0))
	}
	slices.Sort(lags)
	p50, p99 := lags[len(lags)/2], lags[len(lags)*99/100]
	t.Logf("status lag with an unrelated transaction open: p50 %v, p99 %v, max %v (%d changes)", p50, p99, lags[len(lags)-1], n)
	if p99 > time.Second {
		t.Fatalf("status lag p99 %v, want at most 1s", p99)
	}
}
