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

// EnqueueForOrchestrator implements provider.Admin.
func (p *Provider) EnqueueForOrchestrator(ctx context.Context, req provider.EnqueueRequest) error {
	item, delay := req.Item, req.Delay
	const op = "enqueue for orchestrator"
	data, err := encodeEnqueue(op, item, delay, false)
	if err != nil {
		return err
	}
	err = p.writeTx(ctx, op, func(tx *txn) error {
		now := nowMs()
		return insertOrchestratorItem(ctx, tx, item, data, max(visibleAt(item, now), now+delay.Milliseconds()))
	})
	if err == nil {
		p.eng.OrchestratorWork.Notify()
	}
	return err
}

// SendToInstance implements provider.Provider.
func (p *Provider) SendToInstance(ctx context.Context, item provider.WorkItem) error {
	const op = "send"
	data, err := encodeEnqueue(op, item, 0, false)
	if err != nil {
		return err
	}
	err = p.writeTx(ctx, op, func(tx *txn) error { return sendIn(ctx, tx, op, item, data) })
	if err == nil {
		p.eng.OrchestratorWork.Notify()
	}
	return err
}

// sendIn queues a client's message in tx when its instance can receive it.
func sendIn(ctx context.Context, tx *txn, op string, item provider.WorkItem, data string) error {
	if err := checkReceiver(ctx, tx, op, item.Instance); err != nil {
		return err
	}
	return insertOrchestratorItem(ctx, tx, item, data, nowMs())
}

// checkReceiver fails unless instance runs or is being started.
func checkReceiver(ctx context.Context, tx *txn, op, instance string) error {
	status, err := queries.InstanceCurrentStatus(ctx, tx, instance)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		queued, err := queries.StartQueued(ctx, tx, instance)
		if err != nil {
			return classify(op, instance, err)
		}
		if !queued {
			return provider.Permanent(op, instance, provider.ErrNotFound)
		}
		return nil
	case err != nil:
		return classify(op, instance, err)
	case status.Valid && finished(provider.ExecutionStatus(status.String)):
		return provider.Permanent(op, instance, fmt.Errorf("%w: it is %s", provider.ErrInstanceFinished, status.String))
	}
	return nil
}

// finished reports whether an instance whose current execution is in status
// will never read a message. A ContinuedAsNew execution's successor will:
// its ContinueAsNew message is queued.
func finished(status provider.ExecutionStatus) bool {
	return status.Terminal() && status != provider.StatusContinuedAsNew
}

// StartQueued implements provider.Admin.
func (p *Provider) StartQueued(ctx context.Context, req provider.InstanceRequest) (bool, error) {
	instance := req.Instance
	queued, err := queries.StartQueued(ctx, p.stmts, instance)
	if err != nil {
		return false, classify("start queued", instance, err)
	}
	return queued, nil
}

// EnqueueForWorker implements provider.Admin.
func (p *Provider) EnqueueForWorker(ctx context.Context, req provider.EnqueueRequest) error {
	item, delay := req.Item, req.Delay
	const op = "enqueue for worker"
	data, err := encodeEnqueue(op, item, delay, true)
	if err != nil {
		return err
	}
	err = p.writeTx(ctx, op, func(tx *txn) error {
		return insertWorkerItem(ctx, tx, item, data, nowMs()+delay.Milliseconds())
	})
	if err == nil {
		p.eng.WorkerWork.Notify()
	}
	return err
}

func encodeEnqueue(op string, item provider.WorkItem, delay time.Duration, worker bool) (string, error) {
	if delay < 0 {
		return "", encode.Invalid(op, item.Instance, "delay must not be negative, got %v", delay)
	}
	return encode.EncodeItem(op, item, worker)
}

func insertOrchestratorItem(ctx context.Context, tx *txn, item provider.WorkItem, data string, visibleAt int64) error {
	p := dbsqlc.OrchestratorInsertParams{InstanceID: item.Instance, WorkItem: data, VisibleAt: visibleAt, CreatedAt: nowMs()}
	if item.Kind == provider.WorkStartOrchestration {
		p.StartName = sql.NullString{String: item.Name, Valid: true}
		p.StartVersion = sql.NullString{String: item.Version, Valid: true}
	}
	err := queries.OrchestratorInsert(ctx, tx, p)
	if err != nil {
		return fmt.Errorf("enqueue %s for %q: %w", item.Kind, item.Instance, err)
	}
	return nil
}

func insertWorkerItem(ctx context.Context, tx *txn, item provider.WorkItem, data string, visibleAt int64) error {
	err := queries.WorkItemInsert(ctx, tx, dbsqlc.WorkItemInsertParams{InstanceID: item.Instance, ExecutionID: item.ExecutionID,
		ActivityID: item.ID, WorkItem: data, VisibleAt: visibleAt, CreatedAt: nowMs(),
		Tag: nullIfEmpty(item.Tag), SessionID: nullIfEmpty(item.Session)})
	if err != nil {
		return fmt.Errorf("enqueue activity %q for %q: %w", item.Name, item.Instance, err)
	}
	return nil
}

// QueueRewind implements provider.Admin.
func (p *Provider) QueueRewind(ctx context.Context, req provider.RewindRequest) error {
	const op = "rewind"
	item := req.Item
	if err := req.Validate(); err != nil {
		return provider.Permanent(op, item.Instance, err)
	}
	data, err := encodeEnqueue(op, item, 0, false)
	if err != nil {
		return err
	}
	err = p.writeTx(ctx, op, func(tx *txn) error {
		row, err := queries.RewindTarget(ctx, tx, item.Instance)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return provider.Permanent(op, item.Instance, provider.ErrNotFound)
		case err != nil:
			return classify(op, item.Instance, err)
		}
		target := storeengine.RewindTarget{Current: row.CurrentExecutionID, Status: provider.ExecutionStatus(row.Status), Parent: row.Parent, Queued: row.Queued}
		if err := storeengine.CheckRewind(target, req); err != nil {
			return provider.Permanent(op, item.Instance, err)
		}
		if err := openRewoundExecution(ctx, tx, item); err != nil {
			return classify(op, item.Instance, err)
		}
		return insertOrchestratorItem(ctx, tx, item, data, nowMs())
	})
	if err == nil {
		p.eng.OrchestratorWork.Notify()
		p.eng.StatusChanged.Notify()
	}
	return err
}

// openRewoundExecution opens a rewind's execution and makes it current, so
// that the instance's status reads Running from the moment it is queued.
func openRewoundExecution(ctx context.Context, tx *txn, item provider.WorkItem) error {
	now := nowMs()
	if err := queries.ExecutionCreate(ctx, tx, dbsqlc.ExecutionCreateParams{InstanceID: item.Instance, ExecutionID: item.ExecutionID, StartedAt: now}); err != nil {
		return fmt.Errorf("open execution %d: %w", item.ExecutionID, err)
	}
	seq, err := tx.seq.next(ctx, tx)
	if err != nil {
		return err
	}
	if err := queries.InstanceUpdate(ctx, tx, dbsqlc.InstanceUpdateParams{InstanceID: item.Instance, ExecutionID: item.ExecutionID, Seq: seq, Now: now}); err != nil {
		return fmt.Errorf("make execution %d current: %w", item.ExecutionID, err)
	}
	return tx.seq.store(ctx, tx)
}
