package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// ListInstances implements provider.Admin.
func (p *Provider) ListInstances(ctx context.Context, req provider.ListRequest) ([]string, error) {
	if req.Status != "" {
		return p.listInstancesByStatus(ctx, req.Status)
	}
	return queryList[string](ctx, p, "list instances", `SELECT instance_id FROM instances ORDER BY created_at DESC, instance_id DESC`)
}

func (p *Provider) listInstancesByStatus(ctx context.Context, status provider.ExecutionStatus) ([]string, error) {
	return queryList[string](ctx, p, "list instances by status", `
		SELECT i.instance_id FROM instances i
		JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
		WHERE e.status = $1 ORDER BY i.created_at DESC, i.instance_id DESC`, string(status))
}

// ListChildren implements provider.Admin.
func (p *Provider) ListChildren(ctx context.Context, req provider.InstanceRequest) ([]string, error) {
	instance := req.Instance
	return queryList[string](ctx, p, "list children", `
		SELECT instance_id FROM instances WHERE parent_instance_id = $1 ORDER BY created_at, instance_id`, instance)
}

// ListExecutions implements provider.Admin.
func (p *Provider) ListExecutions(ctx context.Context, req provider.InstanceRequest) ([]int64, error) {
	instance := req.Instance
	return queryList[int64](ctx, p, "list executions", `
		SELECT execution_id FROM executions WHERE instance_id = $1 ORDER BY execution_id`, instance)
}

func queryList[T any](ctx context.Context, p *Provider, op, query string, args ...any) ([]T, error) {
	rows, err := p.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, classify(op, "", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[T])
	return out, classify(op, "", err)
}

// GetInstanceInfo implements provider.Admin.
func (p *Provider) GetInstanceInfo(ctx context.Context, req provider.InstanceRequest) (provider.InstanceInfo, error) {
	instance := req.Instance
	const op = "get instance info"
	info := provider.InstanceInfo{Instance: instance}
	var parent, status, output, lastError *string
	err := p.pool.QueryRow(ctx, `
		SELECT i.orchestration_name, i.orchestration_version, i.current_execution_id, i.parent_instance_id,
		       i.custom_status, i.custom_status_version, i.created_at, i.updated_at, e.status, e.output, l.last_error
		FROM instances i
		LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
		LEFT JOIN instance_locks l ON l.instance_id = i.instance_id
		WHERE i.instance_id = $1`, instance).Scan(
		&info.OrchestrationName, &info.Version, &info.CurrentExecutionID, &parent,
		&info.CustomStatus, &info.CustomStatusVersion, &info.CreatedAt, &info.UpdatedAt, &status, &output, &lastError)
	if errors.Is(err, pgx.ErrNoRows) {
		return info, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return info, classify(op, instance, err)
	}
	info.ParentInstance, info.Status, info.Output = deref(parent), provider.ExecutionStatus(deref(status)), deref(output)
	info.LastError = encode.DecodeCause(deref(lastError))
	return info, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// GetExecutionInfo implements provider.Admin.
func (p *Provider) GetExecutionInfo(ctx context.Context, req provider.ExecutionRequest) (provider.ExecutionInfo, error) {
	instance, executionID := req.Instance, req.ExecutionID
	const op = "get execution info"
	info := provider.ExecutionInfo{ExecutionID: executionID}
	var status string
	var output *string
	var completed *time.Time
	err := p.pool.QueryRow(ctx, `
		SELECT e.status, e.output, e.started_at, e.completed_at,
		       (SELECT count(*) FROM history h WHERE h.instance_id = e.instance_id AND h.execution_id = e.execution_id)
		FROM executions e WHERE e.instance_id = $1 AND e.execution_id = $2`, instance, executionID).Scan(
		&status, &output, &info.StartedAt, &completed, &info.EventCount)
	if errors.Is(err, pgx.ErrNoRows) {
		return info, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return info, classify(op, instance, err)
	}
	info.Status, info.Output = provider.ExecutionStatus(status), deref(output)
	if completed != nil {
		info.CompletedAt = *completed
	}
	return info, nil
}

// GetSystemMetrics implements provider.Admin.
func (p *Provider) GetSystemMetrics(ctx context.Context) (provider.SystemMetrics, error) {
	var m provider.SystemMetrics
	err := p.pool.QueryRow(ctx, `
		SELECT count(*),
		       count(*) FILTER (WHERE e.status IN ('Running', 'ContinuedAsNew')),
		       count(*) FILTER (WHERE e.status = 'Completed'),
		       count(*) FILTER (WHERE e.status = 'Failed'),
		       count(*) FILTER (WHERE e.status = 'Terminated'),
		       (SELECT count(*) FROM executions), (SELECT count(*) FROM history)
		FROM instances i
		LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id`).Scan(
		&m.TotalInstances, &m.Running, &m.Completed, &m.Failed, &m.Terminated, &m.TotalExecutions, &m.TotalEvents)
	return m, classify("get system metrics", "", err)
}

// GetQueueDepths implements provider.Admin.
func (p *Provider) GetQueueDepths(ctx context.Context) (provider.QueueDepths, error) {
	var d provider.QueueDepths
	err := p.pool.QueryRow(ctx, `
		SELECT
			(SELECT count(*) FROM orchestrator_queue q WHERE q.visible_at <= now()
			   AND NOT EXISTS (SELECT 1 FROM instance_locks l WHERE l.instance_id = q.instance_id AND l.locked_until > now())),
			(SELECT count(*) FROM worker_queue WHERE visible_at <= now() AND (lock_token IS NULL OR locked_until <= now())),
			(SELECT count(*) FROM orchestrator_queue WHERE visible_at > now())
			  + (SELECT count(*) FROM worker_queue WHERE visible_at > now() AND lock_token IS NULL),
			(SELECT count(*) FROM orchestrator_queue q JOIN instance_locks l ON l.instance_id = q.instance_id
			   WHERE q.visible_at <= now() AND l.locked_until > now())
			  + (SELECT count(*) FROM worker_queue WHERE lock_token IS NOT NULL AND locked_until > now())`).Scan(
		&d.Orchestrator, &d.Worker, &d.Delayed, &d.Locked)
	return d, classify("get queue depths", "", err)
}

// GetParent implements provider.Admin.
func (p *Provider) GetParent(ctx context.Context, req provider.InstanceRequest) (string, bool, error) {
	instance := req.Instance
	const op = "get parent"
	var parent *string
	err := p.pool.QueryRow(ctx, `SELECT parent_instance_id FROM instances WHERE instance_id = $1`, instance).Scan(&parent)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return "", false, classify(op, instance, err)
	}
	return deref(parent), parent != nil, nil
}

// GetInstanceTree implements provider.Admin, in one query: no rows means
// the root does not exist.
func (p *Provider) GetInstanceTree(ctx context.Context, req provider.InstanceRequest) (provider.InstanceTree, error) {
	root := req.Instance
	const op = "get instance tree"
	tree := provider.InstanceTree{Root: root}
	ids, err := queryList[string](ctx, p, op, `
		SELECT d.instance_id FROM dx_descendants($1) d
		WHERE EXISTS (SELECT 1 FROM instances i WHERE i.instance_id = $1)
		ORDER BY d.depth, d.instance_id`, root)
	if err != nil {
		return tree, err
	}
	if len(ids) == 0 {
		return tree, provider.Permanent(op, root, provider.ErrNotFound)
	}
	tree.Instances = ids
	return tree, nil
}

// DeleteInstances implements provider.Admin: one function call, so all or none.
func (p *Provider) DeleteInstances(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResult, error) {
	instances, force := req.Instances, req.Force
	res, err := p.deleteCall(ctx, "delete instances", `SELECT * FROM dx_delete_instances($1, $2)`, nonNil(instances), force)
	if err == nil {
		p.announce(orchestratorChannel) // a freed lock may let waiting messages run
	}
	return res, err
}

// DeleteInstancesBulk implements provider.Admin.
func (p *Provider) DeleteInstancesBulk(ctx context.Context, f provider.DeleteFilter) (provider.DeleteResult, error) {
	const op = "bulk delete instances"
	if f.Limit < 0 {
		return provider.DeleteResult{}, encode.Invalid(op, "", "limit must not be negative, got %d", f.Limit)
	}
	var before *time.Time
	if !f.CompletedBefore.IsZero() {
		before = &f.CompletedBefore
	}
	return p.deleteCall(ctx, op, `SELECT * FROM dx_delete_bulk($1, $2, $3)`, nonNil(f.Instances), before, f.Limit)
}

func (p *Provider) deleteCall(ctx context.Context, op, query string, args ...any) (provider.DeleteResult, error) {
	var r provider.DeleteResult
	err := p.pool.QueryRow(ctx, query, args...).Scan(&r.InstancesDeleted, &r.ExecutionsDeleted, &r.EventsDeleted, &r.MessagesDeleted)
	if err != nil {
		return provider.DeleteResult{}, classify(op, "", err)
	}
	return r, nil
}

// PruneExecutions implements provider.Admin.
func (p *Provider) PruneExecutions(ctx context.Context, req provider.PruneRequest) (provider.PruneResult, error) {
	instance, opts := req.Instance, req.Options
	const op = "prune executions"
	if opts.KeepLast < 0 {
		return provider.PruneResult{}, encode.Invalid(op, instance, "keep-last must not be negative, got %d", opts.KeepLast)
	}
	var before *time.Time
	if !opts.CompletedBefore.IsZero() {
		before = &opts.CompletedBefore
	}
	var r provider.PruneResult
	err := p.pool.QueryRow(ctx, `SELECT * FROM dx_prune_executions($1, $2, $3)`, instance, opts.KeepLast, before).
		Scan(&r.ExecutionsDeleted, &r.EventsDeleted)
	if err != nil {
		return provider.PruneResult{}, classify(op, instance, err)
	}
	return r, nil
}

// nonNil is s, or an empty slice for nil: pgx sends a nil slice as NULL,
// which the functions' array parameters do not expect.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
