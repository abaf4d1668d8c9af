package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// Group commit. SQLite has one writer at a time, and a commit appends every
// page it changed to the WAL, a system call each: a third of a busy runtime's
// CPU went there. So a process runs its write transactions one at a time,
// and the callers that arrive while one commits share the next transaction.
// Each caller's work runs in its own savepoint, so one that fails (a stale
// lock token, an instance that already exists) rolls back only its own
// changes and reports its own error; the others commit.
//
// There is no writer goroutine: a caller that finds no transaction under way
// runs one itself (the leader), with whatever has queued, so an uncontended
// write costs no hand-off between goroutines. A leader whose own work is done
// passes the lead to the oldest waiting caller instead of serving others
// indefinitely.

// maxWriteBatch bounds how many callers share one transaction.
const maxWriteBatch = 64

// writeRequest is one caller's write transaction, answered on done. lead is
// closed when the caller is to run the next batches itself.
type writeRequest struct {
	ctx  context.Context
	op   string
	fn   func(tx *txn) error
	done chan error
	lead chan struct{}
}

// writeQueue holds the write requests waiting for a leader.
type writeQueue struct {
	mu      sync.Mutex
	pending []*writeRequest
	leading bool           // some caller holds the lead
	stopped bool           // the store is closing: nothing more is run
	leaders sync.WaitGroup // one while leading is true
}

// add queues req and reports whether its caller must lead; false with
// ok=false once the queue has stopped.
func (q *writeQueue) add(req *writeRequest) (lead, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return false, false
	}
	q.pending = append(q.pending, req)
	if q.leading {
		return false, true
	}
	q.leading = true
	q.leaders.Add(1)
	return true, true
}

// take moves up to maxWriteBatch waiting requests into batch. When the queue
// has stopped it returns no batch but the requests left, to refuse.
func (q *writeQueue) take(batch []*writeRequest) (next, refused []*writeRequest) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		refused, q.pending = q.pending, nil
		return batch[:0], refused
	}
	n := min(len(q.pending), maxWriteBatch)
	batch = append(batch[:0], q.pending[:n]...)
	rest := copy(q.pending, q.pending[n:])
	clear(q.pending[rest:])
	q.pending = q.pending[:rest]
	return batch, nil
}

// release ends the caller's lead: it passes to the oldest waiting request,
// or lapses when none waits. Once the queue has stopped it lapses and
// returns the requests still waiting, to refuse.
func (q *writeQueue) release() (refused []*writeRequest) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		refused, q.pending = q.pending, nil
	} else if len(q.pending) > 0 {
		close(q.pending[0].lead)
		return nil
	}
	q.leading = false
	q.leaders.Done()
	return refused
}

// stop refuses every later request and every waiting one: the leader
// answers those with ErrClosed once its own batch is done (waitLeader).
func (q *writeQueue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.mu.Unlock()
}

// waitLeader waits until no caller leads.
func (q *writeQueue) waitLeader() { q.leaders.Wait() }

func (q *writeQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// writeTx runs fn in a BEGIN IMMEDIATE transaction and commits it, or rolls
// back fn's changes when it fails. fn may share the transaction with other
// callers' work. While another process holds the write lock the whole
// transaction is retried, so fn must not keep state from a previous try.
func (p *Provider) writeTx(ctx context.Context, op string, fn func(tx *txn) error) error {
	if err := p.checkOpen(op); err != nil {
		return err
	}
	req := &writeRequest{ctx: ctx, op: op, fn: fn, done: make(chan error, 1), lead: make(chan struct{})}
	lead, ok := p.writes.add(req)
	if !ok {
		return provider.Permanent(op, "", provider.ErrClosed)
	}
	if !lead {
		// The leader answers every request it took, even when ctx ends:
		// fn may be running in a transaction that is about to commit.
		select {
		case err := <-req.done:
			return err
		case <-req.lead:
		}
	}
	p.leadWrites(req)
	return <-req.done
}

// leadWrites runs batches of the waiting requests until own has been
// answered, then passes the lead on.
func (p *Provider) leadWrites(own *writeRequest) {
	defer func() { refuseWrites(p.writes.release()) }()
	var batch, refused []*writeRequest
	for {
		batch, refused = p.writes.take(batch)
		refuseWrites(refused)
		if len(batch) == 0 {
			return
		}
		errs := p.commitBatch(batch)
		p.batches.Add(1)
		// Prepared with no connection held, for the next transactions.
		p.stmts.prepareWanted(context.Background())
		answered := false
		for i, req := range batch {
			req.done <- errs[i]
			answered = answered || req == own
		}
		if answered {
			return
		}
	}
}

func refuseWrites(reqs []*writeRequest) {
	for _, req := range reqs {
		req.done <- provider.Permanent(req.op, "", provider.ErrClosed)
	}
}

// commitBatch commits batch's requests in one transaction and returns each
// one's outcome. While another process holds the write lock it retries, up
// to BusyTimeout; requests whose context ends meanwhile are not run.
func (p *Provider) commitBatch(batch []*writeRequest) []error {
	errs := make([]error, len(batch))
	deadline := time.Now().Add(p.opts.BusyTimeout)
	for {
		live := make([]int, 0, len(batch))
		for i, req := range batch {
			if errs[i] == nil {
				if err := req.ctx.Err(); err != nil {
					errs[i] = classify(req.op, "", err)
					continue
				}
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			return errs
		}
		own, err := p.tryBatch(batch, live)
		if err == nil {
			for j, i := range live {
				if own[j] != nil {
					errs[i] = classify(batch[i].op, "", own[j])
				}
			}
			return errs
		}
		if !isBusy(err) || time.Now().After(deadline) {
			for _, i := range live {
				errs[i] = classify(batch[i].op, "", err)
			}
			return errs
		}
		time.Sleep(time.Duration(1+rand.IntN(5)) * time.Millisecond)
	}
}

// tryBatch runs the live requests of batch in one transaction. It returns
// each one's own outcome, or an error that undid the whole transaction
// (nothing committed).
func (p *Provider) tryBatch(batch []*writeRequest, live []int) ([]error, error) {
	// No caller's context: one caller giving up must not end a transaction
	// that commits the others' work.
	tx, err := p.db.BeginTx(context.Background(), nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	errs := make([]error, len(live))
	seq := &statusSeq{}
	for j, i := range live {
		errs[j], err = p.runInSavepoint(tx, batch[i], seq, len(live) > 1)
		if err != nil {
			_ = tx.Rollback()
			return nil, err
		}
	}
	if err := seq.store(context.Background(), &txn{Tx: tx, stmts: p.stmts, ctx: context.Background()}); err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return errs, nil
}

// runInSavepoint runs req's fn; with others sharing the transaction, inside a
// savepoint that is rolled back when fn fails. A failure that must undo the
// whole transaction (another process's lock, a broken savepoint) is returned
// as the second value.
func (p *Provider) runInSavepoint(tx *sql.Tx, req *writeRequest, seq *statusSeq, shared bool) (fnErr, txErr error) {
	t := &txn{Tx: tx, stmts: p.stmts, ctx: context.WithoutCancel(req.ctx), seq: seq}
	if !shared {
		if err := req.fn(t); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if _, err := t.ExecContext(t.ctx, `SAVEPOINT dx_write`); err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	if err := req.fn(t); err != nil {
		if isBusy(err) {
			return nil, err
		}
		if _, rbErr := t.ExecContext(t.ctx, `ROLLBACK TO dx_write`); rbErr != nil {
			return nil, errors.Join(err, fmt.Errorf("roll back to savepoint: %w", rbErr))
		}
		fnErr = err
	}
	if _, err := t.ExecContext(t.ctx, `RELEASE dx_write`); err != nil {
		return nil, fmt.Errorf("release savepoint: %w", err)
	}
	return fnErr, nil
}
