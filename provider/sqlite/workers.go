package sqlite

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

var _ provider.Workers = (*Provider)(nil)

// Heartbeat implements provider.Workers.
func (p *Provider) Heartbeat(ctx context.Context, w provider.WorkerInfo) error {
	const op = "worker heartbeat"
	info, err := provider.EncodeWorkerInfo(w)
	if err != nil {
		return provider.Permanent(op, "", err)
	}
	return p.writeTx(ctx, op, func(tx *txn) error {
		return queries.WorkerHeartbeat(ctx, tx, dbsqlc.WorkerHeartbeatParams{WorkerID: w.ID, Info: info, Now: nowMs()})
	})
}

// RemoveWorker implements provider.Workers.
func (p *Provider) RemoveWorker(ctx context.Context, req provider.WorkerRequest) error {
	return p.writeTx(ctx, "remove worker", func(tx *txn) error {
		return queries.WorkerRemove(ctx, tx, req.ID)
	})
}

// ListWorkers implements provider.Workers.
func (p *Provider) ListWorkers(ctx context.Context, req provider.ListWorkersRequest) ([]provider.WorkerInfo, error) {
	const op = "list workers"
	rows, err := queries.WorkerList(ctx, p.stmts, nowMs()-req.Within.Milliseconds())
	if err != nil {
		return nil, classify(op, "", err)
	}
	out := make([]provider.WorkerInfo, 0, len(rows))
	for _, row := range rows {
		w, err := provider.DecodeWorkerInfo(row.WorkerID, row.Info)
		if err != nil {
			return nil, provider.Permanent(op, "", err)
		}
		w.StartedAt, w.LastSeen = time.UnixMilli(row.StartedAt), time.UnixMilli(row.LastSeen)
		out = append(out, w)
	}
	return out, nil
}
