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
// CPU went there. So one goroutine runs this process's write transactions,
// and the callers that arrive while it commits share its next transaction.
// Each caller's work runs in its own savepoint, so one that fails (a stale
// lock token, an instance that already exists) rolls back only its own
// changes and reports its own error; the others commit.

// maxWriteBatch bounds how many callers share one transaction.
const maxWriteBatch = 64

// writeRequest is one caller's write transaction, answered on done.
type writeRequest struct {
	ctx  context.Context
	op   string
	fn   func(tx *txn) error
	done chan error
}

// writeQueue holds the write requests waiting for the writer.
type writeQueue struct {
	mu      sync.Mutex
	pending []*writeRequest
	stopped bool          // the writer has ended: nothing more is taken
	ready   chan struct{} // a request was added (capacity 1)
}

func newWriteQueue() *writeQueue { return &writeQueue{ready: make(chan struct{}, 1)} }

// add queues req, or reports false once the writer has ended.
func (q *writeQueue) add(req *writeRequest) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return false
	}
	q.pending = append(q.pending, req)
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// take moves up to maxWriteBatch waiting requests into batch.
func (q *writeQueue) take(batch []*writeRequest) []*writeRequest {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.pending), maxWriteBatch)
	batch = append(batch[:0], q.pending[:n]...)
	rest := copy(q.pending, q.pending[n:])
	clear(q.pending[rest:])
	q.pending = q.pending[:rest]
	return batch
}

// stop ends the queue and returns what was still waiting.
func (q *writeQueue) stop() []*writeRequest {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	left := q.pending
	q.pending = nil
	return left
}

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
	req := &writeRequest{ctx: ctx, op: op, fn: fn, done: make(chan error, 1)}
	if !p.writes.add(req) {
		return provider.Permanent(op, "", provider.ErrClosed)
	}
	// The writer answers every request it took, even when ctx ends: fn may
	// be running in a transaction that is about to commit.
	return <-req.done
}

// writeLoop is the provider's one writer: it takes the requests waiting,
// commits them together, prepares the statements they asked for (with no
// connection held, so the next transactions find them) and answers them.
// Once the provider closes it runs nothing more: what is left waiting is
// answered with ErrClosed.
func (p *Provider) writeLoop() {
	defer close(p.writerDone)
	batch := make([]*writeRequest, 0, maxWriteBatch)
	for {
		select {
		case <-p.writes.ready:
		case <-p.closed:
		}
		for p.checkOpen("") == nil {
			if batch = p.writes.take(batch); len(batch) == 0 {
				break
			}
			errs := p.commitBatch(batch)
			p.batches.Add(1)
			p.stmts.prepareWanted(context.Background())
			for i, req := range batch {
				req.done <- errs[i]
			}
			clear(batch)
		}
		if p.checkOpen("") != nil {
			for _, req := range p.writes.stop() {
				req.done <- provider.Permanent(req.op, "", provider.ErrClosed)
			}
			return
		}
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
	for j, i := range live {
		errs[j], err = p.runInSavepoint(tx, batch[i], len(live) > 1)
		if err != nil {
			_ = tx.Rollback()
			return nil, err
		}
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
func (p *Provider) runInSavepoint(tx *sql.Tx, req *writeRequest, shared bool) (fnErr, txErr error) {
	t := &txn{Tx: tx, stmts: p.stmts, ctx: context.WithoutCancel(req.ctx)}
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
