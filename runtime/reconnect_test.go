package runtime_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// downStore fails every fetch while down, as an unreachable database does,
// and reports its reconnection like the PostgreSQL provider's listener.
type downStore struct {
	testStore
	down   atomic.Bool
	failed atomic.Int32
	mu     sync.Mutex
	ch     chan struct{}
}

var errDown = &provider.Error{Op: "fetch", Retryable: true, Err: errors.New("connection refused")}

func (d *downStore) Fetch(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	if d.down.Load() {
		d.failed.Add(1)
		return nil, errDown
	}
	return d.testStore.Fetch(ctx, req)
}

func (d *downStore) FetchWorkItem(ctx context.Context, req provider.FetchWorkRequest) (*provider.WorkItemLease, error) {
	if d.down.Load() {
		d.failed.Add(1)
		return nil, errDown
	}
	return d.testStore.FetchWorkItem(ctx, req)
}

func (d *downStore) Reconnected() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ch == nil {
		d.ch = make(chan struct{})
	}
	return d.ch
}

func (d *downStore) reconnect() {
	d.down.Store(false)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ch != nil {
		close(d.ch)
		d.ch = nil
	}
}

// Dispatchers whose backoff grew during an outage resume when the store
// reports it is reachable again, not when their backoff ends.
func TestDispatchersResumeOnReconnect(t *testing.T) {
	store := &downStore{testStore: openStore(t, "")}
	store.down.Store(true)
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "Echo", func(ctx context.Context, in string) (string, error) { return in, nil })
	runtime.RegisterOrchestration(reg, "Echoes", func(ctx *runtime.OrchestrationContext, in string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("Echo", in))
	})
	opts := fastOptions()
	opts.RetryBackoff, opts.MaxRetryBackoff = 20*time.Second, time.Minute
	startRuntime(t, store, reg, opts)
	for store.failed.Load() < 2 { // both dispatchers failed and sleep in a 20 s backoff
		time.Sleep(10 * time.Millisecond)
	}
	c := runtime.NewClient(store)
	if err := c.Start(t.Context(), "after-outage", "Echoes", "back"); err != nil {
		t.Fatal(err)
	}
	store.reconnect()
	began := time.Now()
	st, err := c.Wait(timeout(t, 10*time.Second), "after-outage")
	if err != nil {
		t.Fatalf("not completed within 10s of the reconnection (the backoff was 20s): %v", err)
	}
	if st.Status != runtime.StatusCompleted {
		t.Fatalf("status %s", st.Status)
	}
	t.Logf("completed %v after the reconnection", time.Since(began).Round(time.Millisecond))
}
