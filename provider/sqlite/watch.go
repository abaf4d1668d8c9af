package sqlite

import (
	"context"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// Watch implements provider.Provider. Every status change takes the next value
// of a store-wide sequence and stamps it on the instance row; the watcher reads
// rows past the last sequence it delivered. Changes made through this Provider
// wake it at once, changes from other processes within PollInterval.
func (p *Provider) Watch(ctx context.Context) (<-chan provider.StatusChange, error) {
	const op = "watch"
	if err := p.eng.CheckOpen(op); err != nil {
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
		woken := p.eng.StatusChanged.C()
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
	rows, err := queries.StatusChangesAfter(ctx, p.stmts, dbsqlc.StatusChangesAfterParams{Seq: seq, MaxChanges: watchBatch})
	if err != nil {
		return nil, err
	}
	changes := make([]provider.StatusChange, len(rows))
	for i, r := range rows {
		changes[i] = provider.StatusChange{Instance: r.InstanceID, ExecutionID: r.CurrentExecutionID,
			Status: provider.ExecutionStatus(r.Status), CustomStatusVersion: r.CustomStatusVersion, Seq: r.StatusSeq}
	}
	return changes, nil
}
