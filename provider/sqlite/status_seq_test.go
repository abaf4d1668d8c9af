package sqlite

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/providertest"
)

// The acks of one write batch take their status sequence numbers from one
// read of the counter, and the batch stores the last back: a status change
// committed later orders after all of them, as Watch reads changes above the
// last number it saw.
func TestStatusSequenceOfABatchOrdersBeforeLaterChanges(t *testing.T) {
	p, ctx := openBatchStore(t)
	ackTwoAndAStaleTokenInOneBatch(t, ctx, p, startTwo(t, ctx, p))
	a, b := statusSeqOf(t, p, "a"), statusSeqOf(t, p, "b")
	if a == 0 || b <= a {
		t.Fatalf("status sequence a=%d b=%d; want distinct numbers in commit order", a, b)
	}

	item := provider.WorkItem{Kind: provider.WorkStartOrchestration, Instance: "c", Name: "O", ExecutionID: 1, Input: `"in"`}
	if err := p.EnqueueForOrchestrator(ctx, provider.EnqueueRequest{Item: item}); err != nil {
		t.Fatal(err)
	}
	got, err := provider.FetchOne(ctx, p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
	if err != nil || got == nil {
		t.Fatalf("fetch c: %v %v", got, err)
	}
	if err := providertest.AckTurn(ctx, p, got.LockToken, completeFirstTurn(got)); err != nil {
		t.Fatal(err)
	}
	if c := statusSeqOf(t, p, "c"); c <= b {
		t.Fatalf("status sequence of a later change %d; want above the batch's %d", c, b)
	}
	var counter int64
	if err := p.db.QueryRowContext(ctx, `SELECT value FROM status_seq WHERE id = 1`).Scan(&counter); err != nil {
		t.Fatal(err)
	}
	if c := statusSeqOf(t, p, "c"); counter != c {
		t.Fatalf("status sequence counter %d; want the last number handed out, %d", counter, c)
	}
}

func statusSeqOf(t *testing.T, p *Provider, instance string) int64 {
	t.Helper()
	var seq int64
	if err := p.db.QueryRow(`SELECT status_seq FROM instances WHERE instance_id = ?`, instance).Scan(&seq); err != nil {
		t.Fatalf("status sequence of %s: %v", instance, err)
	}
	return seq
}
