package sqlite

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

var _ provider.Workers = (*Provider)(nil)

// Heartbeat implements provider.Workers.
func (p *Provider) Heartbeat(ctx context.Context, w provider.WorkerInfo) error {
	const op = "worker heartbeat"
	info, err := provider.EncodeWorkerInfo(w)
	if err != nil {
		return provider.Permanent(op, "", err)
	}
	now := nowMs()
	return p.writeTx(ctx, op, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO workers (worker_id, info, started_at, last_seen) VALUES (?, ?, ?, ?)
			ON CONFLICT (worker_id) DO UPDATE SET info = excluded.info, last_seen = excluded.last_seen`,
			w.ID, info, now, now)
		return err
	})
}

// RemoveWorker implements provider.Workers.
func (p *Provider) RemoveWorker(ctx context.Context, req provider.WorkerRequest) error {
	id := req.ID
	return p.writeTx(ctx, "remove worker", func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM workers WHERE worker_id = ?`, id)
		return err
	})
}

// ListWorkers implements provider.Workers.
func (p *Provider) ListWorkers(ctx context.Context, req provider.ListWorkersRequest) ([]provider.WorkerInfo, error) {
	within := req.Within
	const op = "list workers"
	rows, err := p.stmts.QueryContext(ctx, `
		SELECT worker_id, info, started_at, last_seen FROM workers WHERE last_seen >= ? ORDER BY worker_id`,
		nowMs()-within.Milliseconds())
	if err != nil {
		return nil, classify(op, "", err)
	}
	defer rows.Close()
	var out []provider.WorkerInfo
	for rows.Next() {
		var id, info string
		var started, seen int64
		if err := rows.Scan(&id, &info, &started, &seen); err != nil {
			return nil, classify(op, "", err)
		}
		w, err := provider.DecodeWorkerInfo(id, info)
		if err != nil {
			return nil, provider.Permanent(op, "", err)
		}
		w.StartedAt, w.LastSeen = time.UnixMilli(started), time.UnixMilli(seen)
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(op, "", err)
	}
	return out, nil
}
