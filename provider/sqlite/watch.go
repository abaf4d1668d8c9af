package sqlite

import (
	"context"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
)

// Watch implements provider.Provider. Every status change takes the next value
// of a store-wide sequence and stamps it on the instance row; the watcher reads
// rows past the last sequence it delivered. Changes made through this Provider
// wake it at once, changes from other processes within PollInterval.
func (p *Provider) Watch(ctx context.Context) (<-chan provider.StatusChange, error) {
	const op = "watch"
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	last, err := queries.StatusSeqRead(ctx, p.stmts)
	if err != nil {
		return nil, classify(op, "", fmt.Errorf("read status sequence: %w", err))
	}
	out := make(chan provider.StatusChange, 64)
	go p.watchLoop(ctx, last, out)
	return out, nil
}

func (p *Provider) watchLoop(ctx context.Context, last int64, out chan<- provider.StatusChange) {
	defer close(out)
	for {
		woken := p.statusChanged.C()
		changes, err := p.changesAfter(ctx, last)
		// A failed read is retried at the next wake-up; the sequence makes it lossless.
		if err == nil {
			for _, c := range changes {
				if !wake.Send(ctx, out, c, p.closed) {
					return
				}
				last = c.Seq
			}
			if len(changes) == watchBatch {
				continue
			}
		}
		if !wake.Sleep(ctx, woken, p.opts.PollInterval, p.closed) {
			return
		}
	}
}

// watchBatch caps one read of changes; a full batch is followed by another read at once.
const watchBatch = 1000

func (p *Provider) changesAfter(ctx context.Context, seq int64) ([]provider.StatusChange, error) {
	rows, err := p.stmts.QueryContext(ctx, `
		SELECT i.instance_id, i.current_execution_id, COALESCE(e.status, 'Running'), i.custom_status_version, i.status_seq
		FROM instances i
		LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
		WHERE i.status_seq > ? ORDER BY i.status_seq LIMIT ?`, seq, watchBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var changes []provider.StatusChange
	for rows.Next() {
		var c provider.StatusChange
		var status string
		if err := rows.Scan(&c.Instance, &c.ExecutionID, &status, &c.CustomStatusVersion, &c.Seq); err != nil {
			return nil, err
		}
		c.Status = provider.ExecutionStatus(status)
		changes = append(changes, c)
	}
	return changes, rows.Err()
}
