package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/histcache"
	"github.com/duroxide/duroxide-go/provider/internal/storeengine"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// Turn commits a locked turn.
func (d driver) Turn(ctx context.Context, t provider.TurnCommit) error {
	_, err := d.p.ackTurn(ctx, t.LockToken, t.Ack, ackSteps{})
	return err
}

// ackSteps are what a shortcut adds to a turn's commit, in its transaction;
// each may be nil.
type ackSteps struct {
	// claim runs first; it may take the lock the turn is acked under.
	claim func(tx *txn, now int64) error
	// claimed is set when claim took the turn's instance without a lock row
	// and checked its state: the turn commits in claim's transaction, which
	// no other writer sees before it ends, so the ack neither looks a lock up
	// nor releases one, nor reads again what claim checked.
	claimed *claimedInstance
	// lease runs once the turn's items are queued and leases some of them.
	lease func(tx *txn, now int64) (leased int, err error)
	// next runs once the turn's lock is released and may lock the
	// instance's next turn.
	next func(tx *txn, instance string, now int64) (*provider.OrchestrationItem, error)
}

// claimedInstance is what a claim checked of the instance it took: whether
// it exists, its current execution, and that no message of it is visible.
type claimedInstance struct {
	name    string
	exists  bool
	current int64
}

// ackTurn commits a turn with steps, and notifies the dispatchers after
// commit. It returns the turn steps.next locked, if any.
func (p *Provider) ackTurn(ctx context.Context, lockToken string, ack provider.OrchestrationAck, steps ackSteps) (*provider.OrchestrationItem, error) {
	const op = "ack orchestration item"
	if lockToken == "" {
		return nil, encode.LockNotHeld(op, "", "empty lock token")
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return nil, err
	}
	var statusChanged, pending bool
	var leased int
	var next *provider.OrchestrationItem
	var instance string
	var created bool
	var ackedAt int64
	incarnation := histcache.NewIncarnation()
	err = p.writeTx(ctx, op, func(tx *txn) error {
		statusChanged, leased, next = false, 0, nil
		now := nowMs()
		ackedAt = now
		if steps.claim != nil {
			if err := steps.claim(tx, now); err != nil {
				return err
			}
		}
		var err error
		state := steps.claimed
		if state == nil {
			held, err := heldInstance(ctx, tx, op, lockToken, now)
			if err != nil {
				return err
			}
			if state, err = readInstanceState(ctx, tx, held); err != nil {
				return err
			}
		}
		instance = state.name
		if statusChanged, created, err = commitTurn(ctx, tx, op, *state, enc, now, incarnation); err != nil {
			return err
		}
		if err := enqueueAll(ctx, tx, enc, now); err != nil {
			return err
		}
		if err := deleteTimers(ctx, tx, instance, enc.CancelledTimers); err != nil {
			return err
		}
		if steps.lease != nil {
			if leased, err = steps.lease(tx, now); err != nil {
				return err
			}
		}
		if steps.claimed == nil {
			if err := releaseLock(ctx, tx, lockToken); err != nil {
				return err
			}
		}
		if steps.next != nil {
			if next, err = steps.next(tx, instance, now); err != nil {
				return err
			}
		}
		if next != nil {
			// The next turn takes what the ack queued for its instance.
			pending = enc.WakesOthers(instance, now)
			return nil
		}
		if steps.claimed != nil {
			pending = enc.WakesAny(now) // claim saw no message of the instance visible
			return nil
		}
		pending, err = messagesQueued(ctx, tx, instance, enc, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.eng.Acked(instance, created, incarnation, enc, ackedAt)
	if p.loadHistories(ctx, op, next) != nil {
		next, pending = nil, true // handed back: the turn committed, and a dispatcher takes the next one
	}
	if pending {
		p.eng.OrchestratorWork.Notify()
	}
	if len(enc.WorkerItems) > leased {
		p.eng.WorkerWork.Notify()
	}
	if statusChanged {
		p.eng.StatusChanged.Notify()
	}
	return next, nil
}

// heldInstance returns the instance locked under token, or ErrLockNotHeld when
// the token is unknown, released, or its lock has expired.
func heldInstance(ctx context.Context, tx *txn, op, token string, now int64) (string, error) {
	held, err := queries.InstanceLockHeld(ctx, tx, token)
	instance, lockedUntil := held.InstanceID, held.LockedUntil
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", encode.LockNotHeld(op, "", "the instance lock is no longer held under this token: it expired and another worker took the instance over, or the turn was already acknowledged or abandoned")
	case err != nil:
		return "", fmt.Errorf("look up lock: %w", err)
	case lockedUntil <= now:
		return "", encode.LockNotHeld(op, instance, fmt.Sprintf("lock expired %dms ago", now-lockedUntil))
	}
	return instance, nil
}

// commitTurn writes the instance, execution, history and metadata of a turn.
// It reports whether the instance's status or custom status changed, and
// whether the turn created the instance (as incarnation).
func commitTurn(ctx context.Context, tx *txn, op string, state claimedInstance, enc encode.Ack, now, incarnation int64) (changed, created bool, err error) {
	instance := state.name
	if !state.exists && enc.Meta.OrchestrationName == "" {
		// A turn for an instance that was never started (its messages are being
		// dropped) may not write history: there would be no instance to own it.
		if len(enc.Events) > 0 || enc.Meta.Status != "" || enc.CustomStatus != nil || enc.Values != nil {
			return false, false, encode.Invalid(op, instance, "the first turn of an instance must name its orchestration in the metadata")
		}
		return false, false, nil
	}
	changed = !state.exists || enc.ExecutionID > state.current || enc.Meta.Status != "" || enc.CustomStatus != nil
	var seq int64
	if changed {
		if seq, err = tx.seq.next(ctx, tx); err != nil {
			return false, false, err
		}
	}
	if state.exists {
		err = updateInstance(ctx, tx, instance, enc, now, seq)
	} else {
		err = createInstance(ctx, tx, instance, enc, now, incarnation, seq)
	}
	if err != nil {
		return false, false, err
	}
	// The current execution's row was written by its first turn.
	current := state.exists && enc.ExecutionID == state.current
	return changed, !state.exists, writeExecution(ctx, tx, op, instance, enc, now, current)
}

// readInstanceState reads whether instance exists and its current execution.
func readInstanceState(ctx context.Context, tx *txn, instance string) (*claimedInstance, error) {
	state := &claimedInstance{name: instance}
	var err error
	state.current, err = queries.InstanceCurrentExecution(ctx, tx, instance)
	switch {
	case err == nil:
		state.exists = true
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("read instance %q: %w", instance, err)
	}
	return state, nil
}

// writeExecution writes the turn's execution row, history and status.
func writeExecution(ctx context.Context, tx *txn, op, instance string, enc encode.Ack, now int64, exists bool) error {
	if !exists {
		if err := queries.ExecutionCreate(ctx, tx, dbsqlc.ExecutionCreateParams{InstanceID: instance, ExecutionID: enc.ExecutionID, StartedAt: now}); err != nil {
			return fmt.Errorf("create execution %d of %q: %w", enc.ExecutionID, instance, err)
		}
	}
	if err := appendEvents(ctx, tx, op, instance, enc.ExecutionID, enc.Events, now); err != nil {
		return err
	}
	if err := writeValues(ctx, tx, instance, enc.ExecutionID, enc.Values, now); err != nil {
		return err
	}
	if enc.Meta.Status != "" {
		return setExecutionStatus(ctx, tx, instance, enc, now)
	}
	return nil
}

// customStatusOf returns what a turn's custom status update writes: whether
// it sets one, and the value (NULL clears it).
func customStatusOf(enc encode.Ack) (set bool, value sql.NullString) {
	u := enc.CustomStatus
	if u == nil {
		return false, sql.NullString{}
	}
	if u.Clear {
		return true, sql.NullString{}
	}
	return true, sql.NullString{String: u.Value, Valid: true}
}

// createInstance inserts the instance row of a turn that starts it; seq is
// its status sequence number.
func createInstance(ctx context.Context, tx *txn, instance string, enc encode.Ack, now, incarnation, seq int64) error {
	set, custom := customStatusOf(enc)
	var version int64
	if set {
		version = 1
	}
	err := queries.InstanceCreate(ctx, tx, dbsqlc.InstanceCreateParams{InstanceID: instance,
		OrchestrationName: enc.Meta.OrchestrationName, OrchestrationVersion: enc.Meta.OrchestrationVersion,
		ExecutionID: enc.ExecutionID, ParentInstanceID: nullIfEmpty(enc.Meta.ParentInstance), CustomStatus: custom,
		CustomStatusVersion: version, StatusSeq: seq, Now: now, Incarnation: incarnation})
	if err != nil {
		return fmt.Errorf("create instance %q: %w", instance, err)
	}
	return nil
}

// updateInstance writes a turn's changes to its instance row in one
// statement; seq, when not 0, is the status sequence number of a status
// change.
func updateInstance(ctx context.Context, tx *txn, instance string, enc encode.Ack, now, seq int64) error {
	set, custom := customStatusOf(enc)
	err := queries.InstanceUpdate(ctx, tx, dbsqlc.InstanceUpdateParams{ExecutionID: enc.ExecutionID,
		OrchestrationName: enc.Meta.OrchestrationName, OrchestrationVersion: enc.Meta.OrchestrationVersion,
		CustomSet: set, CustomStatus: custom, Seq: seq, Now: now, InstanceID: instance})
	if err != nil {
		return fmt.Errorf("update instance %q: %w", instance, err)
	}
	return nil
}

// appendEvents inserts history rows; an ID the execution already has fails the
// whole transaction with ErrDuplicateEvent.
func appendEvents(ctx context.Context, tx *txn, op, instance string, executionID int64, events []encode.Event, now int64) error {
	for _, e := range events {
		n, err := queries.HistoryAppend(ctx, tx, dbsqlc.HistoryAppendParams{InstanceID: instance, ExecutionID: executionID,
			EventID: e.ID, EventType: string(e.Kind), EventData: e.Data, CreatedAt: now})
		if err != nil {
			return fmt.Errorf("append event %d to %q: %w", e.ID, instance, err)
		}
		if n == 0 {
			return provider.Permanent(op, instance, fmt.Errorf("%w: execution %d already has event %d",
				provider.ErrDuplicateEvent, executionID, e.ID))
		}
	}
	return nil
}

func setExecutionStatus(ctx context.Context, tx *txn, instance string, enc encode.Ack, now int64) error {
	var completedAt sql.NullInt64
	if enc.Meta.Status.Terminal() {
		completedAt = sql.NullInt64{Int64: now, Valid: true}
	}
	err := queries.ExecutionSetStatus(ctx, tx, dbsqlc.ExecutionSetStatusParams{Status: string(enc.Meta.Status),
		Output: sql.NullString{String: enc.Meta.Output, Valid: true}, CompletedAt: completedAt,
		InstanceID: instance, ExecutionID: enc.ExecutionID})
	if err != nil {
		return fmt.Errorf("set status of %q: %w", instance, err)
	}
	return nil
}

// enqueueAll writes the turn's new worker and orchestrator messages, then
// removes cancelled activities, so one scheduled and cancelled in the same turn
// never runs.
func enqueueAll(ctx context.Context, tx *txn, enc encode.Ack, now int64) error {
	for _, w := range enc.WorkerItems {
		if err := insertWorkerItem(ctx, tx, w.Item, w.Data, now); err != nil {
			return err
		}
	}
	for _, o := range enc.OrchItems {
		if err := insertOrchestratorItem(ctx, tx, o.Item, o.Data, visibleAt(o.Item, now)); err != nil {
			return err
		}
	}
	for _, c := range enc.Cancelled {
		if err := queries.WorkItemCancel(ctx, tx, dbsqlc.WorkItemCancelParams{InstanceID: c.Instance,
			ExecutionID: c.ExecutionID, ActivityID: c.ActivityID}); err != nil {
			return fmt.Errorf("cancel activity %d of %q: %w", c.ActivityID, c.Instance, err)
		}
	}
	return nil
}

// deleteTimers removes the timers the turn cancelled from the instance's queue.
func deleteTimers(ctx context.Context, tx *txn, instance string, timers []provider.TimerRef) error {
	for _, t := range timers {
		if err := queries.TimerCancel(ctx, tx, dbsqlc.TimerCancelParams{InstanceID: instance, ExecutionID: t.ExecutionID,
			TimerID: t.TimerID}); err != nil {
			return fmt.Errorf("delete cancelled timer %d of %q: %w", t.TimerID, instance, err)
		}
	}
	return nil
}

// visibleAt makes timers visible at their due time and everything else at once.
func visibleAt(item provider.WorkItem, now int64) int64 {
	if item.Kind == provider.WorkTimerFired && item.FireAt > now {
		return item.FireAt
	}
	return now
}

// messagesQueued reports whether orchestrator dispatchers have something new
// after the turn: messages it queued, or messages its instance received while
// it was locked (their enqueue woke dispatchers that found the lock held).
func messagesQueued(ctx context.Context, tx *txn, instance string, enc encode.Ack, now int64) (bool, error) {
	if enc.WakesAny(now) {
		return true, nil
	}
	queued, err := queries.InstanceHasVisible(ctx, tx, dbsqlc.InstanceHasVisibleParams{InstanceID: instance, Now: now})
	if err != nil {
		return false, fmt.Errorf("check queued messages of %q: %w", instance, err)
	}
	return queued, nil
}

func releaseLock(ctx context.Context, tx *txn, token string) error {
	if err := queries.OrchestratorDeleteTagged(ctx, tx, token); err != nil {
		return fmt.Errorf("delete processed messages: %w", err)
	}
	if err := queries.InstanceLockRelease(ctx, tx, token); err != nil {
		return fmt.Errorf("release instance lock: %w", err)
	}
	return nil
}

// AbandonTurn implements storeengine.Driver. With a delay the lock
// row stays, under a token nobody holds, until the delay passes: the instance
// keeps its message order and nobody fetches it early.
func (d driver) AbandonTurn(ctx context.Context, a storeengine.AbandonParams) error {
	const op = "abandon orchestration item"
	p, lockToken, delay, ignoreAttempt, lastError := d.p, a.LockToken, a.Delay, a.IgnoreAttempt, a.LastError
	err := p.writeTx(ctx, op, func(tx *txn) error {
		now := nowMs()
		if _, err := heldInstance(ctx, tx, op, lockToken, now); err != nil {
			return err
		}
		if ignoreAttempt {
			if err := queries.OrchestratorUncountAttempt(ctx, tx, lockToken); err != nil {
				return fmt.Errorf("uncount attempt: %w", err)
			}
		}
		if err := queries.OrchestratorUntag(ctx, tx, lockToken); err != nil {
			return fmt.Errorf("untag messages: %w", err)
		}
		if delay > 0 {
			err := queries.InstanceLockDelay(ctx, tx, dbsqlc.InstanceLockDelayParams{NewToken: "abandoned-" + newToken(),
				LockedUntil: now + delay.Milliseconds(), LastError: nullString(lastError), LockToken: lockToken})
			if err != nil {
				return fmt.Errorf("delay instance: %w", err)
			}
			return nil
		}
		if err := queries.InstanceLockRelease(ctx, tx, lockToken); err != nil {
			return fmt.Errorf("release instance lock: %w", err)
		}
		return nil
	})
	if err == nil {
		p.eng.OrchestratorWork.Notify()
	}
	return err
}

// RenewTurn implements storeengine.Driver.
func (d driver) RenewTurn(ctx context.Context, req provider.RenewRequest) error {
	const op = "renew orchestration lock"
	p, lockToken, extendFor := d.p, req.LockToken, req.ExtendFor
	return p.writeTx(ctx, op, func(tx *txn) error {
		now := nowMs()
		n, err := queries.InstanceLockRenew(ctx, tx, dbsqlc.InstanceLockRenewParams{LockedUntil: now + extendFor.Milliseconds(),
			LockToken: lockToken, Now: now})
		if err != nil {
			return fmt.Errorf("renew lock: %w", err)
		}
		if n == 0 {
			return encode.LockNotHeld(op, "", "lock token is unknown, released or expired")
		}
		return nil
	})
}

// nullIfEmpty is s, or NULL for "".
func nullIfEmpty(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// nullString is *s, or NULL for nil.
func nullString(s *string) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}
