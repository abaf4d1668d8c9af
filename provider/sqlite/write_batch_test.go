package sqlite

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// holdWriter occupies the writer with a transaction that waits for the
// returned release; the requests queued meanwhile are taken as one batch.
func holdWriter(t *testing.T, p *Provider) (release func()) {
	t.Helper()
	started, gate, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- p.writeTx(context.Background(), "hold", func(*txn) error { close(started); <-gate; return nil })
	}()
	<-started
	return func() {
		close(gate)
		if err := <-done; err != nil {
			t.Errorf("holding transaction: %v", err)
		}
	}
}

// waitQueued waits until n write requests wait for the writer.
func waitQueued(t *testing.T, p *Provider, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.writes.Len() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d write requests queued, want %d", p.writes.Len(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func openBatchStore(t *testing.T) (*Provider, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	p, err := Open(ctx, t.TempDir()+"/s.db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, ctx
}

// Writers that arrive together share one transaction, and one that fails
// rolls back only its own changes: the others commit.
func TestWriteBatchFailureUndoesOnlyItsOwnChanges(t *testing.T) {
	p, ctx := openBatchStore(t)
	if _, err := p.db.ExecContext(ctx, `CREATE TABLE scratch (name TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	insert := func(name string, fail error) func(tx *txn) error {
		return func(tx *txn) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO scratch (name) VALUES (?)`, name); err != nil {
				return err
			}
			return fail
		}
	}
	release := holdWriter(t, p)
	before := p.batches.Load()
	bFails := errors.New("b fails after writing")
	fns := []func(tx *txn) error{insert("a", nil), insert("b", bFails), insert("c", nil)}
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = p.writeTx(ctx, "insert", fn) })
		waitQueued(t, p, i+1) // in this order
	}
	release()
	wg.Wait()
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], bFails) {
		t.Fatalf("outcomes %v; want a and c committed, b's own error", errs)
	}
	if got := p.batches.Load() - before; got != 2 {
		t.Fatalf("%d transactions for the holder and 3 queued writers, want 2 (one shared)", got)
	}
	if got := scratchNames(t, p); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("rows %v, want [a c]: b's insert must be undone, a's and c's kept", got)
	}
}

func scratchNames(t *testing.T, p *Provider) []string {
	t.Helper()
	rows, err := p.db.Query(`SELECT name FROM scratch ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// One stale lock token in a batch of acks fails only its own ack.
func TestWriteBatchStaleAckFailsAlone(t *testing.T) {
	p, ctx := openBatchStore(t)
	items := startTwo(t, ctx, p)
	ackTwoAndAStaleTokenInOneBatch(t, ctx, p, items)
	for _, it := range items {
		info, err := p.GetInstanceInfo(ctx, provider.InstanceRequest{Instance: it.Instance})
		if err != nil || info.Status != provider.StatusCompleted {
			t.Fatalf("instance %s after its ack: %+v %v; want Completed", it.Instance, info, err)
		}
	}
}

// ackTwoAndAStaleTokenInOneBatch completes both items' first turns in one
// write batch with a stale token's ack between them, which alone fails.
func ackTwoAndAStaleTokenInOneBatch(t *testing.T, ctx context.Context, p *Provider, items []*provider.OrchestrationItem) {
	t.Helper()
	release := holdWriter(t, p)
	tokens := []string{items[0].LockToken, "stale-token", items[1].LockToken}
	acks := []provider.OrchestrationAck{completeFirstTurn(items[0]), completeFirstTurn(items[0]), completeFirstTurn(items[1])}
	errs := make([]error, len(tokens))
	var wg sync.WaitGroup
	for i := range tokens {
		wg.Go(func() { errs[i] = providertest.AckTurn(ctx, p, tokens[i], acks[i]) })
		waitQueued(t, p, i+1)
	}
	release()
	wg.Wait()
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], provider.ErrLockNotHeld) {
		t.Fatalf("ack outcomes %v; want the stale token alone to fail with ErrLockNotHeld", errs)
	}
}

func completeFirstTurn(item *provider.OrchestrationItem) provider.OrchestrationAck {
	now := time.Now().UnixMilli()
	return provider.OrchestrationAck{
		ExecutionID: item.ExecutionID,
		HistoryDelta: []provider.Event{
			{ID: 1, Kind: provider.EventOrchestrationStarted, Time: now, Name: item.OrchestrationName, Input: `"in"`},
			{ID: 2, Kind: provider.EventOrchestrationCompleted, Time: now, Output: `"out"`},
		},
		Metadata: provider.ExecutionMetadata{OrchestrationName: item.OrchestrationName, Status: provider.StatusCompleted, Output: `"out"`},
	}
}

// A writer whose context ends while it waits is answered with the context's
// error and its work never runs; the others in its batch commit.
func TestWriteBatchSkipsCancelledWriter(t *testing.T) {
	p, ctx := openBatchStore(t)
	if _, err := p.db.ExecContext(ctx, `CREATE TABLE scratch (name TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	release := holdWriter(t, p)
	gone, cancel := context.WithCancel(ctx)
	var ran sync.Map
	write := func(c context.Context, name string) error {
		return p.writeTx(c, "insert", func(tx *txn) error {
			ran.Store(name, true)
			_, err := tx.ExecContext(c, `INSERT INTO scratch (name) VALUES (?)`, name)
			return err
		})
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = write(gone, "cancelled") })
	waitQueued(t, p, 1)
	wg.Go(func() { errs[1] = write(ctx, "kept") })
	waitQueued(t, p, 2)
	cancel()
	release()
	wg.Wait()
	if !errors.Is(errs[0], context.Canceled) || errs[1] != nil {
		t.Fatalf("outcomes %v; want context.Canceled for the cancelled writer, nil for the other", errs)
	}
	if _, did := ran.Load("cancelled"); did {
		t.Fatal("the cancelled writer's work ran")
	}
	if got := scratchNames(t, p); !slices.Equal(got, []string{"kept"}) {
		t.Fatalf("rows %v, want [kept]", got)
	}
}

// Close answers the writers still waiting with ErrClosed instead of leaving
// them blocked, and runs none of them.
func TestWriteBatchCloseAnswersWaitingWriters(t *testing.T) {
	p, ctx := openBatchStore(t)
	release := holdWriter(t, p)
	errc := make(chan error, 1)
	go func() { errc <- p.writeTx(ctx, "noop", func(*txn) error { return nil }) }()
	waitQueued(t, p, 1)
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	<-p.closed
	release()
	select {
	case err := <-errc:
		if !errors.Is(err, provider.ErrClosed) {
			t.Fatalf("waiting writer: %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a writer waiting when the store closed was never answered")
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := p.writeTx(ctx, "late", func(*txn) error { return nil }); !errors.Is(err, provider.ErrClosed) {
		t.Fatalf("write after close: %v, want ErrClosed", err)
	}
}
