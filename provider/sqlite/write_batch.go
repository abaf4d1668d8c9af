package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/group"
)

// Group commit (provider/internal/group). SQLite has one writer at a time,
// and a commit appends every page it changed to the WAL, a system call
// each: a third of a busy runtime's CPU went there. So a process runs its
// write transactions one at a time (one leader), and the callers that
// arrive while one commits share the next transaction. Each caller's work
// runs in its own savepoint, so one that fails (a stale lock token, an
// instance that already exists) rolls back only its own changes and
// reports its own error; the others commit.

// maxWriteBatch bounds how many callers share one transaction.
const maxWriteBatch = 64

// writeWork is one caller's write transaction.
type writeWork struct {
	op string
	fn func(tx *txn) error
}

// writeRequest is one caller's write transaction in a batch.
type writeRequest = group.Request[writeWork]

// newWriteQueue returns the group that runs the provider's writes: one
// transaction at a time.
func newWriteQueue() *group.Group[writeWork] {
	return &group.Group[writeWork]{MaxBatch: maxWriteBatch, MaxLeaders: 1}
}

// writeTx runs fn in a BEGIN IMMEDIATE transaction and commits it, or rolls
// back fn's changes when it fails. fn may share the transaction with other
// callers' work. While another process holds the write lock the whole
// transaction is retried, so fn must not keep state from a previous try.
func (p *Provider) writeTx(ctx context.Context, op string, fn func(tx *txn) error) error {
	if err := p.eng.CheckOpen(op); err != nil {
		return err
	}
	err := p.writes.Run(group.NewRequest(ctx, writeWork{op: op, fn: fn}), p.sendWrites)
	if errors.Is(err, group.ErrStopped) {
		return provider.Permanent(op, "", provider.ErrClosed)
	}
	return err
}

// sendWrites commits batch in one transaction and answers each request.
func (p *Provider) sendWrites(batch []*writeRequest) {
	began := time.Now()
	errs := p.commitBatch(batch)
	p.batches.Add(1)
	p.eng.RecordBatch(context.Background(), "write", len(batch), time.Since(began))
	// Prepared with no connection held, for the next transactions.
	p.stmts.prepareWanted(context.Background())
	for i, req := range batch {
		req.Answer(errs[i])
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
				if err := req.Ctx.Err(); err != nil {
					errs[i] = classify(req.Work.op, "", err)
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
					errs[i] = classify(batch[i].Work.op, "", own[j])
				}
			}
			return errs
		}
		if !isBusy(err) || time.Now().After(deadline) {
			for _, i := range live {
				errs[i] = classify(batch[i].Work.op, "", err)
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
	t := &txn{Tx: tx, stmts: p.stmts, ctx: context.WithoutCancel(req.Ctx), seq: seq}
	if !shared {
		if err := req.Work.fn(t); err != nil {
			return nil, err
		}
		return nil, nil
	}
	// The savepoint statements stay in Go: sqlc compiles no transaction control.
	if _, err := t.ExecContext(t.ctx, `SAVEPOINT dx_write`); err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	if err := req.Work.fn(t); err != nil {
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
