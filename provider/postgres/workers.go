package postgres

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"
)

var _ provider.Workers = (*Provider)(nil)

// Heartbeat implements provider.Workers.
func (p *Provider) Heartbeat(ctx context.Context, w provider.WorkerInfo) error {
	const op = "worker heartbeat"
	info, err := provider.EncodeWorkerInfo(w)
	if err != nil {
		return provider.Permanent(op, "", err)
	}
	err = queries.WorkerHeartbeat(ctx, p.pool, dbsqlc.WorkerHeartbeatParams{WorkerID: w.ID, Info: []byte(info)})
	return classify(op, "", err)
}

// RemoveWorker implements provider.Workers.
func (p *Provider) RemoveWorker(ctx context.Context, req provider.WorkerRequest) error {
	return classify("remove worker", "", queries.WorkerRemove(ctx, p.pool, req.ID))
}

// ListWorkers implements provider.Workers.
func (p *Provider) ListWorkers(ctx context.Context, req provider.ListWorkersRequest) ([]provider.WorkerInfo, error) {
	const op = "list workers"
	rows, err := queries.WorkerList(ctx, p.pool, req.Within.Seconds())
	if err != nil {
		return nil, classify(op, "", err)
	}
	out := make([]provider.WorkerInfo, 0, len(rows))
	for _, row := range rows {
		w, err := provider.DecodeWorkerInfo(row.WorkerID, row.Info)
		if err != nil {
			return nil, provider.Permanent(op, "", err)
		}
		w.StartedAt, w.LastSeen = row.StartedAt, row.LastSeen
		out = append(out, w)
	}
	return out, nil
}
