package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// PruneExecutions implements provider.Admin.
func (p *Provider) PruneExecutions(ctx context.Context, req provider.PruneRequest) (provider.PruneResult, error) {
	instance, opts := req.Instance, req.Options
	const op = "prune executions"
	if opts.KeepLast < 0 {
		return provider.PruneResult{}, encode.Invalid(op, instance, "keep-last must not be negative, got %d", opts.KeepLast)
	}
	var res provider.PruneResult
	err := p.writeTx(ctx, op, func(tx *txn) error {
		res = provider.PruneResult{}
		var current int64
		err := tx.QueryRowContext(ctx, `SELECT current_execution_id FROM instances WHERE instance_id = ?`, instance).Scan(&current)
		if errors.Is(err, sql.ErrNoRows) {
			return provider.Permanent(op, instance, provider.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read instance: %w", err)
		}
		victims, err := pruneCandidates(ctx, tx, instance, current, opts)
		if err != nil {
			return err
		}
		for _, id := range victims {
			h, err := tx.ExecContext(ctx, `DELETE FROM history WHERE instance_id = ? AND execution_id = ?`, instance, id)
			if err != nil {
				return fmt.Errorf("prune history of execution %d: %w", id, err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM executions WHERE instance_id = ? AND execution_id = ?`, instance, id); err != nil {
				return fmt.Errorf("prune execution %d: %w", id, err)
			}
			n, _ := h.RowsAffected()
			res.EventsDeleted += n
			res.ExecutionsDeleted++
		}
		return nil
	})
	return res, err
}

// pruneCandidates lists executions other than the current one that fall outside
// KeepLast (newest first, the current one counted) and completed before
// CompletedBefore, for whichever of the two is set.
func pruneCandidates(ctx context.Context, tx *txn, instance string, current int64, opts provider.PruneOptions) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT execution_id, completed_at FROM executions WHERE instance_id = ? ORDER BY execution_id DESC`, instance)
	if err != nil {
		return nil, fmt.Errorf("list executions: %w", err)
	}
	defer rows.Close()
	var victims []int64
	for rank := 0; rows.Next(); rank++ {
		var id int64
		var completed sql.NullInt64
		if err := rows.Scan(&id, &completed); err != nil {
			return nil, fmt.Errorf("list executions: %w", err)
		}
		if id == current {
			continue
		}
		if opts.KeepLast > 0 && rank < opts.KeepLast {
			continue
		}
		if !opts.CompletedBefore.IsZero() && (!completed.Valid || completed.Int64 >= opts.CompletedBefore.UnixMilli()) {
			continue
		}
		victims = append(victims, id)
	}
	return victims, rows.Err()
}
