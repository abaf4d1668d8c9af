package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// ListInstances implements provider.Admin.
func (p *Provider) ListInstances(ctx context.Context, req provider.ListRequest) ([]string, error) {
	if req.Status != "" {
		return p.listInstancesByStatus(ctx, req.Status)
	}
	return p.queryStrings(ctx, "list instances", `SELECT instance_id FROM instances ORDER BY created_at DESC, rowid DESC`)
}

func (p *Provider) listInstancesByStatus(ctx context.Context, status provider.ExecutionStatus) ([]string, error) {
	return p.queryStrings(ctx, "list instances by status", `
		SELECT i.instance_id FROM instances i
		JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
		WHERE e.status = ? ORDER BY i.created_at DESC, i.rowid DESC`, string(status))
}

// ListChildren implements provider.Admin.
func (p *Provider) ListChildren(ctx context.Context, req provider.InstanceRequest) ([]string, error) {
	instance := req.Instance
	return p.queryStrings(ctx, "list children", `
		SELECT instance_id FROM instances WHERE parent_instance_id = ? ORDER BY created_at, rowid`, instance)
}

// ListExecutions implements provider.Admin.
func (p *Provider) ListExecutions(ctx context.Context, req provider.InstanceRequest) ([]int64, error) {
	instance := req.Instance
	const op = "list executions"
	rows, err := p.stmts.QueryContext(ctx, `SELECT execution_id FROM executions WHERE instance_id = ? ORDER BY execution_id`, instance)
	if err != nil {
		return nil, classify(op, instance, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, classify(op, instance, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(op, instance, err)
	}
	return ids, nil
}

func (p *Provider) queryStrings(ctx context.Context, op, query string, args ...any) ([]string, error) {
	rows, err := p.stmts.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, classify(op, "", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, classify(op, "", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(op, "", err)
	}
	return out, nil
}

// GetInstanceInfo implements provider.Admin.
func (p *Provider) GetInstanceInfo(ctx context.Context, req provider.InstanceRequest) (provider.InstanceInfo, error) {
	instance := req.Instance
	const op = "get instance info"
	info := provider.InstanceInfo{Instance: instance}
	var parent, custom, status, output, lastError sql.NullString
	var created, updated int64
	err := p.stmts.queryRow(ctx, `
		SELECT i.orchestration_name, i.orchestration_version, i.current_execution_id, i.parent_instance_id,
		       i.custom_status, i.custom_status_version, i.created_at, i.updated_at, e.status, e.output, l.last_error
		FROM instances i
		LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id
		LEFT JOIN instance_locks l ON l.instance_id = i.instance_id
		WHERE i.instance_id = ?`, instance).Scan(
		&info.OrchestrationName, &info.Version, &info.CurrentExecutionID, &parent,
		&custom, &info.CustomStatusVersion, &created, &updated, &status, &output, &lastError)
	if errors.Is(err, sql.ErrNoRows) {
		return info, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return info, classify(op, instance, err)
	}
	info.ParentInstance = parent.String
	info.Status = provider.ExecutionStatus(status.String)
	info.Output = output.String
	info.CreatedAt, info.UpdatedAt = time.UnixMilli(created), time.UnixMilli(updated)
	if custom.Valid {
		info.CustomStatus = &custom.String
	}
	info.LastError = encode.DecodeCause(lastError.String)
	return info, nil
}

// GetExecutionInfo implements provider.Admin.
func (p *Provider) GetExecutionInfo(ctx context.Context, req provider.ExecutionRequest) (provider.ExecutionInfo, error) {
	instance, executionID := req.Instance, req.ExecutionID
	const op = "get execution info"
	info := provider.ExecutionInfo{ExecutionID: executionID}
	var status string
	var output sql.NullString
	var started int64
	var completed sql.NullInt64
	err := p.stmts.queryRow(ctx, `
		SELECT e.status, e.output, e.started_at, e.completed_at,
		       (SELECT COUNT(*) FROM history h WHERE h.instance_id = e.instance_id AND h.execution_id = e.execution_id)
		FROM executions e WHERE e.instance_id = ? AND e.execution_id = ?`, instance, executionID).Scan(
		&status, &output, &started, &completed, &info.EventCount)
	if errors.Is(err, sql.ErrNoRows) {
		return info, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return info, classify(op, instance, err)
	}
	info.Status = provider.ExecutionStatus(status)
	info.Output = output.String
	info.StartedAt = time.UnixMilli(started)
	if completed.Valid {
		info.CompletedAt = time.UnixMilli(completed.Int64)
	}
	return info, nil
}

// GetSystemMetrics implements provider.Admin.
func (p *Provider) GetSystemMetrics(ctx context.Context) (provider.SystemMetrics, error) {
	var m provider.SystemMetrics
	err := p.stmts.queryRow(ctx, `
		SELECT
			(SELECT COUNT(*) FROM instances),
			COALESCE(SUM(e.status = 'Running' OR e.status = 'ContinuedAsNew'), 0),
			COALESCE(SUM(e.status = 'Completed'), 0),
			COALESCE(SUM(e.status = 'Failed'), 0),
			COALESCE(SUM(e.status = 'Terminated'), 0),
			(SELECT COUNT(*) FROM executions),
			(SELECT COUNT(*) FROM history)
		FROM instances i
		LEFT JOIN executions e ON e.instance_id = i.instance_id AND e.execution_id = i.current_execution_id`).Scan(
		&m.TotalInstances, &m.Running, &m.Completed, &m.Failed, &m.Terminated, &m.TotalExecutions, &m.TotalEvents)
	if err != nil {
		return m, classify("get system metrics", "", err)
	}
	return m, nil
}

// GetQueueDepths implements provider.Admin.
func (p *Provider) GetQueueDepths(ctx context.Context) (provider.QueueDepths, error) {
	var d provider.QueueDepths
	now := nowMs()
	err := p.stmts.queryRow(ctx, `
		SELECT
			(SELECT COUNT(*) FROM orchestrator_queue q LEFT JOIN instance_locks l ON l.instance_id = q.instance_id
			 WHERE q.visible_at <= ?1 AND (l.instance_id IS NULL OR l.locked_until <= ?1)),
			(SELECT COUNT(*) FROM worker_queue WHERE visible_at <= ?1 AND (lock_token IS NULL OR locked_until <= ?1)),
			(SELECT COUNT(*) FROM orchestrator_queue WHERE visible_at > ?1)
			  + (SELECT COUNT(*) FROM worker_queue WHERE visible_at > ?1 AND lock_token IS NULL),
			(SELECT COUNT(*) FROM orchestrator_queue q JOIN instance_locks l ON l.instance_id = q.instance_id
			 WHERE q.visible_at <= ?1 AND l.locked_until > ?1)
			  + (SELECT COUNT(*) FROM worker_queue WHERE lock_token IS NOT NULL AND locked_until > ?1)`, now).Scan(
		&d.Orchestrator, &d.Worker, &d.Delayed, &d.Locked)
	if err != nil {
		return d, classify("get queue depths", "", err)
	}
	return d, nil
}

// GetParent implements provider.Admin.
func (p *Provider) GetParent(ctx context.Context, req provider.InstanceRequest) (string, bool, error) {
	instance := req.Instance
	const op = "get parent"
	var parent sql.NullString
	err := p.stmts.queryRow(ctx, `SELECT parent_instance_id FROM instances WHERE instance_id = ?`, instance).Scan(&parent)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return "", false, classify(op, instance, err)
	}
	return parent.String, parent.Valid, nil
}

// GetInstanceTree implements provider.Admin.
func (p *Provider) GetInstanceTree(ctx context.Context, req provider.InstanceRequest) (provider.InstanceTree, error) {
	root := req.Instance
	const op = "get instance tree"
	tree := provider.InstanceTree{Root: root}
	var err error
	if _, _, err = p.GetParent(ctx, provider.InstanceRequest{Instance: root}); err != nil {
		return tree, err
	}
	tree.Instances, err = descendants(ctx, p.db, root)
	if err != nil {
		return tree, classify(op, root, err)
	}
	return tree, nil
}

// descendants returns root and every instance below it, parents first. UNION
// (not UNION ALL) stops at a cycle should a corrupt store contain one.
func descendants(ctx context.Context, q querier, root string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `
		WITH RECURSIVE tree(id, depth) AS (
			SELECT ?, 0
			UNION
			SELECT i.instance_id, t.depth + 1 FROM instances i JOIN tree t ON i.parent_instance_id = t.id
			WHERE t.depth < 10000
		)
		SELECT id FROM tree GROUP BY id ORDER BY MIN(depth), id`, root)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
