package postgres

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
	_, err = p.pool.Exec(ctx, `
		INSERT INTO workers (worker_id, info) VALUES ($1, $2::jsonb)
		ON CONFLICT (worker_id) DO UPDATE SET info = excluded.info, last_seen = now()`, w.ID, info)
	return classify(op, "", err)
}

// RemoveWorker implements provider.Workers.
func (p *Provider) RemoveWorker(ctx context.Context, req provider.WorkerRequest) error {
	id := req.ID
	_, err := p.pool.Exec(ctx, `DELETE FROM workers WHERE worker_id = $1`, id)
	return classify("remove worker", "", err)
}

// ListWorkers implements provider.Workers.
func (p *Provider) ListWorkers(ctx context.Context, req provider.ListWorkersRequest) ([]provider.WorkerInfo, error) {
	within := req.Within
	const op = "list workers"
	rows, err := p.pool.Query(ctx, `
		SELECT worker_id, info::text, started_at, last_seen FROM workers
		WHERE last_seen >= now() - make_interval(secs => $1) ORDER BY worker_id`, within.Seconds())
	if err != nil {
		return nil, classify(op, "", err)
	}
	defer rows.Close()
	var out []provider.WorkerInfo
	for rows.Next() {
		var id, info string
		var started, seen time.Time
		if err := rows.Scan(&id, &info, &started, &seen); err != nil {
			return nil, classify(op, "", err)
		}
		w, err := provider.DecodeWorkerInfo(id, info)
		if err != nil {
			return nil, provider.Permanent(op, "", err)
		}
		w.StartedAt, w.LastSeen = started, seen
		out = append(out, w)
	}
	return out, classify(op, "", rows.Err())
}
