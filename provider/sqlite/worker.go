package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/storeengine"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// LockWork implements storeengine.Driver: a read on any connection first
// says whether any activity is ready, so idle pollers take no write lock.
func (d driver) LockWork(ctx context.Context, w storeengine.WorkParams) (*provider.WorkItemLease, error) {
	f := newWorkFilter(w)
	if !d.p.workReady(ctx, f) {
		return nil, nil
	}
	return d.p.lockWorkItem(ctx, "fetch work item", w.LockFor, f)
}

// workFilter is what the worker queue's queries take of a look: the tag
// filter (provider.TagFilter) and the session rules (provider.Sessions).
type workFilter struct {
	any, untagged bool
	tags          string // a JSON array
	sessions      *provider.SessionConfig
}

func newWorkFilter(w storeengine.WorkParams) workFilter {
	return workFilter{any: w.Tags.Any, untagged: w.Tags.TakesUntagged(), tags: jsonArray(w.Tags.Tags).String, sessions: w.Sessions}
}

// worker is the session owner the queries check, NULL without sessions.
func (f workFilter) worker() sql.NullString {
	if f.sessions == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: f.sessions.WorkerID, Valid: true}
}

// next finds the oldest item f takes in tx. It looks first as if the
// worker had room for another session, and counts its sessions only when
// that found an item of a session it does not own: most looks meet no
// session at all.
func (f workFilter) next(ctx context.Context, tx *txn, now int64) (dbsqlc.WorkItemNextRow, error) {
	look := func(room bool) (dbsqlc.WorkItemNextRow, error) {
		return queries.WorkItemNext(ctx, tx, dbsqlc.WorkItemNextParams{Now: now, AnyTag: f.any, Untagged: f.untagged, Tags: f.tags,
			WorkerID: f.worker(), Room: room})
	}
	next, err := look(f.sessions != nil)
	if err != nil || !next.SessionID.Valid {
		return next, err
	}
	owned, err := queries.SessionsOwnedBy(ctx, tx, dbsqlc.SessionsOwnedByParams{WorkerID: f.sessions.WorkerID, Now: now,
		SessionID: next.SessionID.String})
	if err != nil {
		return next, fmt.Errorf("count sessions of %s: %w", f.sessions.WorkerID, err)
	}
	if owned.Owns || owned.Live < int64(f.sessions.MaxSessions) {
		return next, nil
	}
	return look(false)
}

// claimSession makes the worker own the item's session (or extends its
// lease), and reports false when another worker owns it.
func (f workFilter) claimSession(ctx context.Context, tx *txn, session string, now int64) (bool, error) {
	n, err := queries.SessionClaim(ctx, tx, dbsqlc.SessionClaimParams{SessionID: session, WorkerID: f.sessions.WorkerID,
		LockedUntil: now + f.sessions.LockFor.Milliseconds(), Now: now})
	if err != nil {
		return false, fmt.Errorf("claim session %q: %w", session, err)
	}
	return n == 1, nil
}

func (p *Provider) lockWorkItem(ctx context.Context, op string, lockTimeout time.Duration, f workFilter) (*provider.WorkItemLease, error) {
	var lease *provider.WorkItemLease
	err := p.writeTx(ctx, op, func(tx *txn) error {
		lease = nil
		now := nowMs()
		next, err := f.next(ctx, tx, now)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find work item: %w", err)
		}
		if next.SessionID.Valid {
			if claimed, err := f.claimSession(ctx, tx, next.SessionID.String, now); err != nil || !claimed {
				return err
			}
		}
		l := &provider.WorkItemLease{LockToken: newToken()}
		attempts, err := queries.WorkItemLock(ctx, tx, dbsqlc.WorkItemLockParams{LockToken: l.LockToken,
			LockedUntil: now + lockTimeout.Milliseconds(), ID: next.ID})
		if err != nil {
			return fmt.Errorf("lock work item %d: %w", next.ID, err)
		}
		l.AttemptCount = int(attempts)
		decodeLease(l, next.InstanceID, next.ExecutionID, next.ActivityID, next.WorkItem, next.ID)
		if l.State, err = executionState(ctx, tx, next.InstanceID, next.ExecutionID); err != nil {
			return err
		}
		lease = l
		return nil
	})
	return lease, err
}

// decodeLease fills the lease's item from its stored data; an undecodable
// item keeps its reference and reports why.
func decodeLease(l *provider.WorkItemLease, instance string, executionID, activityID int64, data string, id int64) {
	l.Item, l.DecodeError = provider.DecodeWorkItem(data)
	if l.DecodeError != nil {
		l.DecodeError = &provider.CorruptDataError{Instance: instance, What: fmt.Sprintf("worker queue item %d", id), Err: l.DecodeError}
		l.Item = provider.WorkItem{Kind: provider.WorkActivityExecute, Instance: instance, ExecutionID: executionID, ID: activityID}
	}
}

// executionState tells a worker whether anyone still waits for an activity of
// the given execution.
func executionState(ctx context.Context, db dbsqlc.DBTX, instance string, executionID int64) (provider.ExecutionState, error) {
	row, err := queries.InstanceExecutionState(ctx, db, instance)
	if errors.Is(err, sql.ErrNoRows) {
		return provider.StateMissing, nil
	}
	if err != nil {
		return "", fmt.Errorf("read state of %q: %w", instance, err)
	}
	return provider.StateOf(true, executionID, row.CurrentExecutionID, provider.ExecutionStatus(row.Status.String)), nil
}

// Activity commits an activity's result.
func (d driver) Activity(ctx context.Context, lockToken string, completion *provider.WorkItem) error {
	p := d.p
	err := p.ackWork(ctx, lockToken, completion, nil)
	if err == nil && completion != nil {
		p.eng.OrchestratorWork.Notify()
	}
	return err
}

// ActivityQuietly commits an activity's result quietly when the instance is
// still as q says. Writes are serialised, so the check sees every turn
// committed before it, and a turn locked after it finds the completion
// queued.
func (d driver) ActivityQuietly(ctx context.Context, lockToken string, completion provider.WorkItem, q storeengine.QuietCheck) (bool, error) {
	p := d.p
	quiet := false
	err := p.ackWork(ctx, lockToken, &completion, func(tx *txn, now int64) error {
		found, err := queries.WorkItemQuietCheck(ctx, tx, dbsqlc.WorkItemQuietCheckParams{Incarnation: q.Incarnation,
			ExecutionID: q.Execution, LastEvent: q.LastEvent, Now: now, InstanceID: completion.Instance})
		if errors.Is(err, sql.ErrNoRows) {
			return nil // the instance is gone: nothing to be quiet for
		}
		quiet = found != 0
		return err
	})
	if err == nil && !quiet {
		p.eng.OrchestratorWork.Notify()
	}
	return quiet, err
}

// ackWork deletes the leased item, queues its completion and runs then (which
// may be nil) in the same transaction.
func (p *Provider) ackWork(ctx context.Context, lockToken string, completion *provider.WorkItem, then func(tx *txn, now int64) error) error {
	const op = "ack work item"
	if lockToken == "" {
		return encode.LockNotHeld(op, "", "empty lock token")
	}
	var data string
	if completion != nil {
		var err error
		if data, err = encode.EncodeItem(op, *completion, false); err != nil {
			return err
		}
	}
	return p.writeTx(ctx, op, func(tx *txn) error {
		now := nowMs()
		n, err := deleteLeased(ctx, tx, lockToken, now)
		if err != nil {
			return err
		}
		if n == 0 {
			return encode.LockNotHeld(op, "", "lock token is unknown, expired, or its item was cancelled")
		}
		if completion == nil {
			return nil
		}
		if err := insertOrchestratorItem(ctx, tx, *completion, data, now); err != nil {
			return err
		}
		if then != nil {
			return then(tx, now)
		}
		return nil
	})
}

// deleteLeased deletes the item a live lease holds, noting work on its
// session, and reports how many it deleted (0: the lease is not held).
func deleteLeased(ctx context.Context, tx *txn, lockToken string, now int64) (int64, error) {
	if err := queries.SessionTouchLeased(ctx, tx, dbsqlc.SessionTouchLeasedParams{Now: now, LockToken: lockToken}); err != nil {
		return 0, fmt.Errorf("note work on the session of the item: %w", err)
	}
	n, err := queries.WorkItemDelete(ctx, tx, dbsqlc.WorkItemDeleteParams{LockToken: lockToken, Now: now})
	if err != nil {
		return 0, fmt.Errorf("delete work item: %w", err)
	}
	return n, nil
}

// touchSession notes work on session (none when not valid).
func touchSession(ctx context.Context, tx *txn, session sql.NullString, now int64) error {
	if !session.Valid {
		return nil
	}
	if err := queries.SessionTouch(ctx, tx, dbsqlc.SessionTouchParams{Now: now, SessionID: session.String}); err != nil {
		return fmt.Errorf("note work on session %q: %w", session.String, err)
	}
	return nil
}

// AbandonWork implements storeengine.Driver.
func (d driver) AbandonWork(ctx context.Context, a storeengine.AbandonParams) error {
	const op = "abandon work item"
	p, lockToken, delay, ignoreAttempt := d.p, a.LockToken, a.Delay, a.IgnoreAttempt
	err := p.writeTx(ctx, op, func(tx *txn) error {
		now := nowMs()
		n, err := queries.WorkItemAbandon(ctx, tx, dbsqlc.WorkItemAbandonParams{VisibleAt: now + delay.Milliseconds(),
			IgnoreAttempt: ignoreAttempt, LockToken: lockToken, Now: now})
		if err != nil {
			return fmt.Errorf("abandon work item: %w", err)
		}
		if n == 0 {
			return encode.LockNotHeld(op, "", "lock token is unknown, expired, or its item was cancelled")
		}
		return nil
	})
	if err == nil {
		p.eng.WorkerWork.Notify()
	}
	return err
}

// RenewWork implements storeengine.Driver.
func (d driver) RenewWork(ctx context.Context, req provider.RenewRequest) (provider.ExecutionState, error) {
	const op = "renew work item lock"
	p, lockToken, extendFor := d.p, req.LockToken, req.ExtendFor
	var state provider.ExecutionState
	err := p.writeTx(ctx, op, func(tx *txn) error {
		now := nowMs()
		renewed, err := queries.WorkItemRenew(ctx, tx, dbsqlc.WorkItemRenewParams{LockedUntil: now + extendFor.Milliseconds(),
			LockToken: lockToken, Now: now})
		if errors.Is(err, sql.ErrNoRows) {
			return encode.LockNotHeld(op, "", "lock token is unknown, expired, or its item was cancelled")
		}
		if err != nil {
			return fmt.Errorf("renew work item lock: %w", err)
		}
		if err := touchSession(ctx, tx, renewed.SessionID, now); err != nil {
			return err
		}
		state, err = executionState(ctx, tx, renewed.InstanceID, renewed.ExecutionID)
		return err
	})
	return state, err
}
