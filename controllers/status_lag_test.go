package controllers_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
)

// A transaction left open elsewhere on the PostgreSQL server (a psql session,
// another application's database) must not delay status: the delay from an
// instance's completion in the store to its CR showing Completed stays well
// under the resync (5 s here) at p99. Before, every change report waited for
// that transaction and status followed only on the resync (p99 5.0 s); with
// the change feed it is 0.25-0.33 s on an idle machine and up to 1.2 s on a
// loaded one, so the bound is half the resync, not a latency target.
func TestStatusLagWithUnrelatedOpenTransaction(t *testing.T) {
	const n = 100
	p := newPool(t)
	conn, err := pgx.Connect(t.Context(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(t.Context()) }()
	blocker, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = blocker.Rollback(t.Context()) }()
	if _, err := blocker.Exec(t.Context(), "SELECT pg_current_xact_id()"); err != nil {
		t.Fatal(err)
	}

	seen := watchCompletions(t, p.ns)
	for i := range n {
		if err := k8s.Create(t.Context(), p.orchestration(fmt.Sprintf("lag-%03d", i), "Hello", "lag")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // a steady trickle, not a burst: the lag, not the queue
	}
	observed := waitForCompletions(t, seen, n, 2*time.Minute)
	delays := make([]time.Duration, 0, n)
	for name, at := range observed {
		o := &v1.Orchestration{}
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: p.ns, Name: name}, o); err != nil {
			t.Fatal(err)
		}
		exec, err := p.store.GetExecutionInfo(t.Context(), provider.ExecutionRequest{Instance: o.Status.InstanceID, ExecutionID: 1})
		if err != nil || exec.CompletedAt.IsZero() {
			t.Fatalf("%s: execution info %+v, %v", name, exec, err)
		}
		delays = append(delays, at.Sub(exec.CompletedAt))
	}
	slices.Sort(delays)
	p50, p99 := delays[len(delays)/2], delays[len(delays)*99/100]
	t.Logf("RESULT scenario=status-lag-open-transaction n=%d status_delay_p50_ms=%d status_delay_p99_ms=%d status_delay_max_ms=%d",
		n, p50.Milliseconds(), p99.Milliseconds(), delays[len(delays)-1].Milliseconds())
	if bound := 2500 * time.Millisecond; p99 > bound {
		t.Fatalf("store→CR status lag p99 %v with an unrelated transaction open, want at most %v (half the resync)", p99, bound)
	}
}
