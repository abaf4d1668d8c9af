package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/histcache"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// TurnLeasing commits a locked turn and leases its chosen activities: the turn's
// worker items are leased in the transaction that inserts them.
func (d driver) TurnLeasing(ctx context.Context, t provider.TurnCommit) ([]*provider.WorkItemLease, error) {
	p, lockToken, ack, lease, lockTimeout := d.p, t.LockToken, t.Ack, t.Lease, t.LeaseFor
	const op = "ack orchestration item"
	if err := encode.CheckLeasing(op, ack, lease, lockTimeout); err != nil {
		return nil, err
	}
	var leases []*provider.WorkItemLease
	_, err := p.ackTurn(ctx, lockToken, ack, ackSteps{lease: leaseAll(ctx, ack, lease, lockTimeout, &leases)})
	if err != nil {
		return nil, err
	}
	return leases, nil
}

// TurnNext commits a locked turn and locks the instance's next turn: once
// the turn's lock is released, its transaction locks the instance again when
// a message of it is visible.
func (d driver) TurnNext(ctx context.Context, t provider.TurnCommit, lockTimeout time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error) {
	p, instance, lockToken, ack, lease, activityLockTimeout := d.p, t.Instance, t.LockToken, t.Ack, t.Lease, t.LeaseFor
	const op = "ack orchestration item"
	if err := encode.CheckLeasing(op, ack, lease, activityLockTimeout, lockTimeout); err != nil {
		return nil, nil, err
	}
	var leases []*provider.WorkItemLease
	next, err := p.ackTurn(ctx, lockToken, ack, ackSteps{
		lease: leaseAll(ctx, ack, lease, activityLockTimeout, &leases),
		next: func(tx *txn, held string, now int64) (*provider.OrchestrationItem, error) {
			if held != instance {
				return nil, encode.Invalid(op, instance, "lock token holds instance %q", held)
			}
			return lockVisible(ctx, tx, instance, now, now+lockTimeout.Milliseconds())
		},
	})
	if err != nil {
		return nil, nil, err
	}
	return leases, next, nil
}

// lockVisible locks the instance's turn when a message of it is visible.
func lockVisible(ctx context.Context, tx *txn, instance string, now, lockedUntil int64) (*provider.OrchestrationItem, error) {
	visible, err := queries.InstanceHasVisible(ctx, tx, dbsqlc.InstanceHasVisibleParams{InstanceID: instance, Now: now})
	if err != nil {
		return nil, fmt.Errorf("check visible messages of %q: %w", instance, err)
	}
	if !visible {
		return nil, nil
	}
	return lockInstance(ctx, tx, instance, now, lockedUntil)
}

// leaseAll leases the worker items at the positions in lease, which the
// ack's transaction inserted, into *leases.
func leaseAll(ctx context.Context, ack provider.OrchestrationAck, lease []int, lockTimeout time.Duration, leases *[]*provider.WorkItemLease) func(tx *txn, now int64) (int, error) {
	return func(tx *txn, now int64) (int, error) {
		*leases = (*leases)[:0]
		for _, i := range lease {
			l, err := leaseInserted(ctx, tx, ack.WorkerItems[i], now, now+lockTimeout.Milliseconds())
			if err != nil {
				return 0, err
			}
			if l != nil {
				*leases = append(*leases, l)
			}
		}
		return len(*leases), nil
	}
}

// FirstTurn commits a new instance's first turn (direct start): the transaction
// locks the new instance under a token of our own, refusing when it exists,
// is locked or has messages queued, and acks the turn under that token.
func (d driver) FirstTurn(ctx context.Context, t provider.TurnCommit) (bool, []*provider.WorkItemLease, error) {
	p, instance, ack, lease, lockTimeout := d.p, t.Instance, t.Ack, t.Lease, t.LeaseFor
	const op = "commit first turn"
	if err := encode.CheckFirstTurn(op, instance, ack, lease, lockTimeout); err != nil {
		return false, nil, err
	}
	claim := func(tx *txn, now int64) error { return claimNewInstance(ctx, tx, instance, now) }
	var leases []*provider.WorkItemLease
	_, err := p.ackTurn(ctx, newToken(), ack, ackSteps{claim: claim, claimed: &claimedInstance{name: instance}, lease: leaseAll(ctx, ack, lease, lockTimeout, &leases)})
	if errors.Is(err, errNotNew) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	return true, leases, nil
}

// errNotNew refuses a direct start: the instance exists, is locked or has
// messages queued. It rolls the claim back and is never returned to callers.
var errNotNew = errors.New("instance is not new")

// claimNewInstance claims, for a turn committed in this transaction, an
// instance that does not exist, has no live lock and no message queued. An
// expired lock row is released, as a fetch taking the instance over would.
func claimNewInstance(ctx context.Context, tx *txn, instance string, now int64) error {
	claim, err := queries.InstanceNewClaimCheck(ctx, tx, instance)
	switch {
	case err != nil:
		return fmt.Errorf("check new instance %q: %w", instance, err)
	case claim.Taken || claim.LockedUntil > now:
		return errNotNew
	}
	return releaseExpiredLock(ctx, tx, instance, claim.LockedUntil >= 0)
}

// releaseExpiredLock deletes instance's lock row, found expired (hasLock),
// for a turn that commits without one.
func releaseExpiredLock(ctx context.Context, tx *txn, instance string, hasLock bool) error {
	if !hasLock {
		return nil
	}
	if err := queries.InstanceLockDelete(ctx, tx, instance); err != nil {
		return fmt.Errorf("release the expired lock of %q: %w", instance, err)
	}
	return nil
}

// leaseInserted leases the worker item this transaction inserted for w and
// reports its execution's state as a fetch would (a turn may schedule an
// activity and end its orchestration).
func leaseInserted(ctx context.Context, tx *txn, w provider.WorkItem, now, lockedUntil int64) (*provider.WorkItemLease, error) {
	l := &provider.WorkItemLease{LockToken: newToken()}
	leased, err := queries.WorkItemLeaseInserted(ctx, tx, dbsqlc.WorkItemLeaseInsertedParams{LockToken: l.LockToken,
		LockedUntil: lockedUntil, InstanceID: w.Instance, ExecutionID: w.ExecutionID, ActivityID: w.ID})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lease activity %d of %q: %w", w.ID, w.Instance, err)
	}
	if l.State, err = executionState(ctx, tx, w.Instance, w.ExecutionID); err != nil {
		return nil, err
	}
	l.AttemptCount = int(leased.AttemptCount)
	decodeLease(l, w.Instance, w.ExecutionID, w.ID, leased.WorkItem, leased.ID)
	return l, nil
}

// ActivityNext commits an activity's result and locks its instance's turn: the activity's
// ack and the lock of its instance in one write transaction.
func (d driver) ActivityNext(ctx context.Context, lockToken string, completion provider.WorkItem, lockTimeout time.Duration) (*provider.OrchestrationItem, error) {
	p := d.p
	const op = "ack work item"
	if err := encode.CheckTimeouts(op, lockTimeout, 0); err != nil {
		return nil, err
	}
	var item *provider.OrchestrationItem
	err := p.ackWork(ctx, lockToken, &completion, func(tx *txn, now int64) error {
		var err error
		item, err = lockInstance(ctx, tx, completion.Instance, now, now+lockTimeout.Milliseconds())
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.loadHistories(ctx, op, item) != nil {
		item = nil // handed back: the ack committed, and a dispatcher takes the turn
	}
	if item == nil {
		p.eng.OrchestratorWork.Notify()
	}
	return item, nil
}

// CachedTurn commits a turn built from the history cache: the
// transaction deletes the activity's item (or the timer's message), locks
// the instance under a token of our own when it is unchanged, and acks the
// turn under that token.
func (d driver) CachedTurn(ctx context.Context, workToken string, t provider.TurnCommit) ([]*provider.WorkItemLease, error) {
	p, turn, ack, lease, activityLockTimeout := d.p, t.Cached, t.Ack, t.Lease, t.LeaseFor
	const op = "commit cached turn"
	want, err := histcache.CheckCommit(op, workToken, turn, ack, lease, activityLockTimeout)
	if err != nil {
		return nil, err
	}
	claim := func(tx *txn, now int64) error {
		if err := consumeMessages(ctx, tx, op, turn.Instance, workToken, want.Queued, now); err != nil {
			return err
		}
		return claimUnchanged(ctx, tx, op, turn.Instance, want, now)
	}
	var leases []*provider.WorkItemLease
	claimed := &claimedInstance{name: turn.Instance, exists: true, current: want.Execution}
	steps := ackSteps{claim: claim, claimed: claimed, lease: leaseAll(ctx, ack, lease, activityLockTimeout, &leases)}
	if _, err := p.ackTurn(ctx, newToken(), ack, steps); err != nil {
		return nil, err
	}
	return leases, nil
}

// consumeMessages deletes what a cached turn consumes: the activity item
// leased under workToken, if any, and the visible, untaken messages stored
// as queued (timers, or the quiet results delivered with the activity's).
func consumeMessages(ctx context.Context, tx *txn, op, instance, workToken string, queued []string, now int64) error {
	if workToken != "" {
		n, err := deleteLeased(ctx, tx, workToken, now)
		if err != nil {
			return err
		}
		if n == 0 {
			return encode.LockNotHeld(op, instance, "activity lock token is unknown, expired, or its item was cancelled")
		}
	}
	for _, stored := range queued {
		n, err := queries.OrchestratorMessageConsume(ctx, tx, dbsqlc.OrchestratorMessageConsumeParams{InstanceID: instance, Now: now, WorkItem: stored})
		if err != nil {
			return fmt.Errorf("delete consumed message: %w", err)
		}
		if n == 0 {
			return encode.Stale(op, instance, "a message the turn consumes was taken, or is not due")
		}
	}
	return nil
}

// claimUnchanged claims instance for a cached turn committed in this
// transaction: it returns ErrStale unless the instance is unlocked and still
// the incarnation in the execution ending at lastEvent, running, with no
// message visible. An expired lock row is released, as a fetch would take it
// over. An execution can end without an event (failed for a message no one
// can decode): its history's last event alone does not tell.
func claimUnchanged(ctx context.Context, tx *txn, op, instance string, want histcache.Commit, now int64) error {
	claim, err := queries.InstanceCachedClaimCheck(ctx, tx, dbsqlc.InstanceCachedClaimCheckParams{Incarnation: want.Incarnation,
		ExecutionID: want.Execution, LastEvent: want.LastEvent, Now: now, InstanceID: instance})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return encode.Stale(op, instance, "the instance no longer exists")
	case err != nil:
		return fmt.Errorf("check instance %q: %w", instance, err)
	case claim.LockedUntil > now:
		return encode.Stale(op, instance, "the instance is locked")
	case !claim.Same:
		return encode.Stale(op, instance, "the instance changed, ended or has messages waiting")
	}
	return releaseExpiredLock(ctx, tx, instance, claim.LockedUntil >= 0)
}
