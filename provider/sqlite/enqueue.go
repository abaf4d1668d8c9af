package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// EnqueueForOrchestrator implements provider.Provider.
func (p *Provider) EnqueueForOrchestrator(ctx context.Context, item provider.WorkItem, delay time.Duration) error {
	const op = "enqueue for orchestrator"
	data, err := encodeEnqueue(op, item, delay, false)
	if err != nil {
		return err
	}
	err = p.writeTx(ctx, op, func(tx *sql.Tx) error {
		now := nowMs()
		return insertOrchestratorItem(ctx, tx, item, data, max(visibleAt(item, now), now+delay.Milliseconds()))
	})
	if err == nil {
		p.orchestratorWork.Notify()
	}
	return err
}

// EnqueueForWorker implements provider.Provider.
func (p *Provider) EnqueueForWorker(ctx context.Context, item provider.WorkItem, delay time.Duration) error {
	const op = "enqueue for worker"
	data, err := encodeEnqueue(op, item, delay, true)
	if err != nil {
		return err
	}
	err = p.writeTx(ctx, op, func(tx *sql.Tx) error {
		return insertWorkerItem(ctx, tx, item, data, nowMs()+delay.Milliseconds())
	})
	if err == nil {
		p.workerWork.Notify()
	}
	return err
}

func encodeEnqueue(op string, item provider.WorkItem, delay time.Duration, worker bool) (string, error) {
	if delay < 0 {
		return "", encode.Invalid(op, item.Instance, "delay must not be negative, got %v", delay)
	}
	return encode.EncodeItem(op, item, worker)
}

func insertOrchestratorItem(ctx context.Context, tx *sql.Tx, item provider.WorkItem, data string, visibleAt int64) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO orchestrator_queue (instance_id, work_item, visible_at, created_at) VALUES (?, ?, ?, ?)`,
		item.Instance, data, visibleAt, nowMs())
	if err != nil {
		return fmt.Errorf("enqueue %s for %q: %w", item.Kind, item.Instance, err)
	}
	return nil
}

func insertWorkerItem(ctx context.Context, tx *sql.Tx, item provider.WorkItem, data string, visibleAt int64) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO worker_queue (instance_id, execution_id, activity_id, work_item, visible_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`,
		item.Instance, item.ExecutionID, item.ID, data, visibleAt, nowMs())
	if err != nil {
		return fmt.Errorf("enqueue activity %q for %q: %w", item.Name, item.Instance, err)
	}
	return nil
}
