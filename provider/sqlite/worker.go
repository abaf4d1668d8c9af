package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
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
	f := newTagFilter(w.Tags)
	if !d.p.workReady(ctx, f) {
		return nil, nil
	}
	return d.p.lockWorkItem(ctx, "fetch work item", w.LockFor, f)
}

// tagFilter is a provider.TagFilter as the worker queue's queries take it.
type tagFilter struct {
	any, untagged bool
	tags          string // a JSON array
}

func newTagFilter(f provider.TagFilter) tagFilter {
	tags := "[]"
	if len(f.Tags) > 0 {
		b, _ := json.Marshal(f.Tags) // strings always encode
		tags = string(b)
	}
	return tagFilter{any: f.Any, untagged: f.TakesUntagged(), tags: tags}
}

func (p *Provider) lockWorkItem(ctx context.Context, op string, lockTimeout time.Duration, f tagFilter) (*provider.WorkItemLease, error) {
	var lease *provider.WorkItemLease
	err := p.writeTx(ctx, op, func(tx *txn) error {
		lease = nil
		now := nowMs()
		next, err := queries.WorkItemNext(ctx, tx, dbsqlc.WorkItemNextParams{Now: now, AnyTag: f.any, Untagged: f.untagged, Tags: f.tags})
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find work item: %w", err)
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
		n, err := queries.WorkItemDelete(ctx, tx, dbsqlc.WorkItemDeleteParams{LockToken: lockToken, Now: now})
		if err != nil {
			return fmt.Errorf("delete work item: %w", err)
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
		state, err = executionState(ctx, tx, renewed.InstanceID, renewed.ExecutionID)
		return err
	})
	return state, err
}
