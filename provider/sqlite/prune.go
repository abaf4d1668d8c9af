package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
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
		current, err := queries.InstanceCurrentExecution(ctx, tx, instance)
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
			n, err := queries.PruneHistory(ctx, tx, dbsqlc.PruneHistoryParams{InstanceID: instance, ExecutionID: id})
			if err != nil {
				return fmt.Errorf("prune history of execution %d: %w", id, err)
			}
			if err := queries.PruneExecution(ctx, tx, dbsqlc.PruneExecutionParams{InstanceID: instance, ExecutionID: id}); err != nil {
				return fmt.Errorf("prune execution %d: %w", id, err)
			}
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
	rows, err := queries.PruneCandidates(ctx, tx, instance)
	if err != nil {
		return nil, fmt.Errorf("list executions: %w", err)
	}
	var victims []int64
	for rank, row := range rows {
		completed := row.CompletedAt
		switch {
		case row.ExecutionID == current:
		case opts.KeepLast > 0 && rank < opts.KeepLast:
		case !opts.CompletedBefore.IsZero() && (!completed.Valid || completed.Int64 >= opts.CompletedBefore.UnixMilli()):
		default:
			victims = append(victims, row.ExecutionID)
		}
	}
	return victims, nil
}
