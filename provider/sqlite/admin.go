package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// ListInstances implements provider.Admin.
func (p *Provider) ListInstances(ctx context.Context, req provider.ListRequest) (provider.InstancePage, error) {
	if err := req.Validate(); err != nil {
		return provider.InstancePage{}, err
	}
	after, _ := provider.ParseListCursor(req.After) // Validate read it
	size := req.PageSize()
	rows, err := queries.InstancePage(ctx, p.stmts, dbsqlc.InstancePageParams{
		Status: nullIfEmpty(string(req.Status)), Orchestration: nullIfEmpty(req.Orchestration), IDPrefix: nullIfEmpty(req.IDPrefix), Instance: nullIfEmpty(req.Instance),
		CreatedAfter: msOrNull(req.CreatedAfter), CreatedBefore: msOrNull(req.CreatedBefore),
		UpdatedAfter: msOrNull(req.UpdatedAfter), UpdatedBefore: msOrNull(req.UpdatedBefore),
		AfterCreated: msOrNull(after.CreatedAt), AfterID: nullIfEmpty(after.Instance), MaxRows: int64(size + 1)})
	if err != nil {
		return provider.InstancePage{}, classify("list instances", "", err)
	}
	infos := make([]provider.InstanceInfo, len(rows))
	for i, r := range rows {
		infos[i] = provider.InstanceInfo{Instance: r.InstanceID, OrchestrationName: r.OrchestrationName,
			Version: r.OrchestrationVersion, CurrentExecutionID: r.CurrentExecutionID,
			ParentInstance: r.ParentInstanceID.String, CustomStatus: stringPtr(r.CustomStatus),
			CustomStatusVersion: r.CustomStatusVersion, CreatedAt: time.UnixMilli(r.CreatedAt), UpdatedAt: time.UnixMilli(r.UpdatedAt),
			Status: provider.ExecutionStatus(r.Status), Output: r.Output, LastError: encode.DecodeCause(r.LastError.String)}
	}
	return provider.NextPage(infos, size), nil
}

// stringPtr is s's string, or nil for NULL.
func stringPtr(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// msOrNull is t in Unix milliseconds, or NULL for the zero time.
func msOrNull(t time.Time) sql.NullInt64 {
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: !t.IsZero()}
}

// ListChildren implements provider.Admin.
func (p *Provider) ListChildren(ctx context.Context, req provider.InstanceRequest) ([]string, error) {
	ids, err := queries.InstanceChildren(ctx, p.stmts, req.Instance)
	return ids, classify("list children", "", err)
}

// ListExecutions implements provider.Admin.
func (p *Provider) ListExecutions(ctx context.Context, req provider.InstanceRequest) ([]int64, error) {
	ids, err := queries.InstanceExecutions(ctx, p.stmts, req.Instance)
	return ids, classify("list executions", req.Instance, err)
}

// GetInstanceInfo implements provider.Admin.
func (p *Provider) GetInstanceInfo(ctx context.Context, req provider.InstanceRequest) (provider.InstanceInfo, error) {
	instance := req.Instance
	const op = "get instance info"
	row, err := queries.InstanceInfo(ctx, p.stmts, instance)
	if errors.Is(err, sql.ErrNoRows) {
		return provider.InstanceInfo{Instance: instance}, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return provider.InstanceInfo{Instance: instance}, classify(op, instance, err)
	}
	info := provider.InstanceInfo{Instance: instance, OrchestrationName: row.OrchestrationName,
		Version: row.OrchestrationVersion, CurrentExecutionID: row.CurrentExecutionID,
		ParentInstance: row.ParentInstanceID.String, CustomStatusVersion: row.CustomStatusVersion,
		CreatedAt: time.UnixMilli(row.CreatedAt), UpdatedAt: time.UnixMilli(row.UpdatedAt),
		Status: provider.ExecutionStatus(row.Status.String), Output: row.Output.String,
		LastError: encode.DecodeCause(row.LastError.String)}
	if row.CustomStatus.Valid {
		info.CustomStatus = &row.CustomStatus.String
	}
	return info, nil
}

// GetExecutionInfo implements provider.Admin.
func (p *Provider) GetExecutionInfo(ctx context.Context, req provider.ExecutionRequest) (provider.ExecutionInfo, error) {
	instance, executionID := req.Instance, req.ExecutionID
	const op = "get execution info"
	info := provider.ExecutionInfo{ExecutionID: executionID}
	row, err := queries.ExecutionInfo(ctx, p.stmts, dbsqlc.ExecutionInfoParams{InstanceID: instance, ExecutionID: executionID})
	if errors.Is(err, sql.ErrNoRows) {
		return info, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return info, classify(op, instance, err)
	}
	info.Status, info.Output = provider.ExecutionStatus(row.Status), row.Output.String
	info.StartedAt, info.EventCount = time.UnixMilli(row.StartedAt), row.EventCount
	if row.CompletedAt.Valid {
		info.CompletedAt = time.UnixMilli(row.CompletedAt.Int64)
	}
	return info, nil
}

// GetSystemMetrics implements provider.Admin.
func (p *Provider) GetSystemMetrics(ctx context.Context) (provider.SystemMetrics, error) {
	r, err := queries.SystemMetrics(ctx, p.stmts)
	if err != nil {
		return provider.SystemMetrics{}, classify("get system metrics", "", err)
	}
	return provider.SystemMetrics{TotalInstances: r.TotalInstances, Running: r.Running, Stalled: r.Stalled, Pending: r.Pending, Completed: r.Completed,
		Failed: r.Failed, Terminated: r.Terminated, TotalExecutions: r.TotalExecutions, TotalEvents: r.TotalEvents}, nil
}

// GetQueueDepths implements provider.Admin.
func (p *Provider) GetQueueDepths(ctx context.Context) (provider.QueueDepths, error) {
	r, err := queries.QueueDepths(ctx, p.stmts, nowMs())
	if err != nil {
		return provider.QueueDepths{}, classify("get queue depths", "", err)
	}
	return provider.NewQueueDepths(r.Orchestrator, r.Worker, r.Delayed, r.Locked, r.OldestOrchestrator, r.OldestWorker), nil
}

// GetBacklog implements provider.Admin.
func (p *Provider) GetBacklog(ctx context.Context) (provider.Backlog, error) {
	rows, err := queries.Backlog(ctx, p.stmts, nowMs())
	if err != nil {
		return provider.Backlog{}, classify("get backlog", "", err)
	}
	var b provider.Backlog
	for _, r := range rows {
		b.Add(r.Kind, r.Name, r.Ready, r.Oldest)
	}
	return b, nil
}

// GetParent implements provider.Admin.
func (p *Provider) GetParent(ctx context.Context, req provider.InstanceRequest) (string, bool, error) {
	instance := req.Instance
	const op = "get parent"
	parent, err := queries.InstanceParent(ctx, p.stmts, instance)
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
	tree.Instances, err = queries.InstanceTree(ctx, p.stmts, root)
	if err != nil {
		return tree, classify(op, root, err)
	}
	return tree, nil
}

// ListQueuedActivities implements provider.Admin.
func (p *Provider) ListQueuedActivities(ctx context.Context, req provider.InstanceRequest) ([]provider.QueuedActivity, error) {
	rows, err := queries.QueuedActivities(ctx, p.stmts, dbsqlc.QueuedActivitiesParams{Now: nowMs(), InstanceID: req.Instance,
		MaxRows: provider.MaxQueuedActivities})
	if err != nil {
		return nil, classify("list queued activities", req.Instance, err)
	}
	out := make([]provider.QueuedActivity, len(rows))
	for i, r := range rows {
		out[i] = provider.QueuedActivity{ExecutionID: r.ExecutionID, ActivityID: r.ActivityID, Name: r.Name, Tag: r.Tag,
			Queued: time.UnixMilli(r.CreatedAt), Attempts: int(r.AttemptCount), Leased: r.Leased}
	}
	return out, nil
}
