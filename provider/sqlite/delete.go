package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// DeleteInstances implements provider.Admin.
func (p *Provider) DeleteInstances(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResult, error) {
	instances, force := req.Instances, req.Force
	const op = "delete instances"
	var total provider.DeleteResult
	err := p.writeTx(ctx, op, func(tx *txn) error {
		total = provider.DeleteResult{}
		for _, id := range instances {
			tree, err := deletableTree(ctx, tx, op, id, force)
			if err != nil {
				return err
			}
			res, err := deleteRows(ctx, tx, tree)
			if err != nil {
				return err
			}
			total.Add(res)
		}
		return nil
	})
	if err != nil {
		return provider.DeleteResult{}, err
	}
	p.eng.OrchestratorWork.Notify()
	return total, nil
}

// DeleteInstancesBulk implements provider.Admin. Roots whose tree still has a
// running instance are left alone.
func (p *Provider) DeleteInstancesBulk(ctx context.Context, filter provider.DeleteFilter) (provider.DeleteResult, error) {
	const op = "bulk delete instances"
	if filter.Limit < 0 {
		return provider.DeleteResult{}, encode.Invalid(op, "", "limit must not be negative, got %d", filter.Limit)
	}
	var total provider.DeleteResult
	err := p.writeTx(ctx, op, func(tx *txn) error {
		total = provider.DeleteResult{}
		roots, err := bulkDeleteCandidates(ctx, tx, filter)
		if err != nil {
			return err
		}
		deleted := 0
		for _, root := range roots {
			if filter.Limit > 0 && deleted == filter.Limit {
				break
			}
			tree, err := deletableTree(ctx, tx, op, root, false)
			if errors.Is(err, provider.ErrInstanceRunning) {
				continue
			}
			if err != nil {
				return err
			}
			res, err := deleteRows(ctx, tx, tree)
			if err != nil {
				return err
			}
			total.Add(res)
			deleted++
		}
		return nil
	})
	return total, err
}

// bulkDeleteCandidates lists the finished roots f selects, oldest first:
// among f.Instances when it lists any, completed before f.CompletedBefore
// when it is set.
func bulkDeleteCandidates(ctx context.Context, tx *txn, f provider.DeleteFilter) ([]string, error) {
	before := msOrNull(f.CompletedBefore)
	var roots []string
	var err error
	if len(f.Instances) == 0 {
		roots, err = queries.DeleteBulkCandidates(ctx, tx, before)
	} else {
		var ids []byte
		if ids, err = json.Marshal(f.Instances); err != nil {
			return nil, fmt.Errorf("encode instance filter: %w", err)
		}
		roots, err = queries.DeleteBulkCandidatesIn(ctx, tx, dbsqlc.DeleteBulkCandidatesInParams{Instances: string(ids), CompletedBefore: before})
	}
	if err != nil {
		return nil, fmt.Errorf("select instances to delete: %w", err)
	}
	return roots, nil
}

// deletableTree returns the instance and its descendants after checking that
// the delete is allowed.
func deletableTree(ctx context.Context, tx *txn, op, instance string, force bool) ([]string, error) {
	parent, err := queries.InstanceParent(ctx, tx, instance)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read instance %q: %w", instance, err)
	}
	if parent.Valid && !force {
		return nil, encode.Invalid(op, instance, "it is a sub-orchestration of %q; delete the root instance, or force", parent.String)
	}
	if parent.Valid {
		running, err := runningIn(ctx, tx, []string{parent.String})
		if err != nil {
			return nil, err
		}
		if len(running) > 0 {
			return nil, provider.Permanent(op, instance, fmt.Errorf("%w: it is a sub-orchestration of %q, which is running and waits for it; terminate or delete the root instead",
				provider.ErrInstanceRunning, parent.String))
		}
	}
	tree, err := queries.InstanceTree(ctx, tx, instance)
	if err != nil {
		return nil, fmt.Errorf("find descendants of %q: %w", instance, err)
	}
	if force {
		return tree, nil
	}
	running, err := runningIn(ctx, tx, tree)
	if err != nil {
		return nil, err
	}
	if len(running) > 0 {
		return nil, provider.Permanent(op, instance, fmt.Errorf("%w: %s not finished; use force to delete anyway",
			provider.ErrInstanceRunning, strings.Join(running, ", ")))
	}
	return tree, nil
}

func runningIn(ctx context.Context, tx *txn, ids []string) ([]string, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("encode instance list: %w", err)
	}
	running, err := queries.DeleteRunningIn(ctx, tx, string(list))
	if err != nil {
		return nil, fmt.Errorf("check running instances: %w", err)
	}
	return running, nil
}

// deleteRows removes every row of the given instances. Removing the lock row
// too makes an in-flight ack fail with ErrLockNotHeld instead of recreating them.
func deleteRows(ctx context.Context, tx *txn, ids []string) (provider.DeleteResult, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return provider.DeleteResult{}, fmt.Errorf("encode instance list: %w", err)
	}
	var res provider.DeleteResult
	var locks, values int64
	steps := []struct {
		table string
		run   func(context.Context, dbsqlc.DBTX, string) (int64, error)
		count *int64
	}{
		{"history", queries.DeleteHistoryOf, &res.EventsDeleted},
		{"executions", queries.DeleteExecutionsOf, &res.ExecutionsDeleted},
		{"orchestrator_queue", queries.DeleteOrchestratorQueueOf, &res.MessagesDeleted},
		{"worker_queue", queries.DeleteWorkerQueueOf, &res.MessagesDeleted},
		{"instance_values", queries.DeleteValuesOf, &values},
		{"instance_locks", queries.DeleteInstanceLocksOf, &locks},
		{"instances", queries.DeleteInstancesOf, &res.InstancesDeleted},
	}
	for _, s := range steps {
		n, err := s.run(ctx, tx, string(list))
		if err != nil {
			return res, fmt.Errorf("delete from %s: %w", s.table, err)
		}
		*s.count += n
	}
	return res, nil
}
