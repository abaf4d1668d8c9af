package postgres

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"
)

// ListInstances implements provider.Admin.
func (p *Provider) ListInstances(ctx context.Context, req provider.ListRequest) (provider.InstancePage, error) {
	if err := req.Validate(); err != nil {
		return provider.InstancePage{}, err
	}
	after, _ := provider.ParseListCursor(req.After) // Validate read it
	size := req.PageSize()
	rows, err := queries.InstancePage(ctx, p.pool, dbsqlc.InstancePageParams{
		Status: nonEmpty(string(req.Status)), Orchestration: nonEmpty(req.Orchestration), IDPrefix: nonEmpty(req.IDPrefix), Instance: nonEmpty(req.Instance),
		CreatedAfter: timeOrNil(req.CreatedAfter), CreatedBefore: timeOrNil(req.CreatedBefore),
		UpdatedAfter: timeOrNil(req.UpdatedAfter), UpdatedBefore: timeOrNil(req.UpdatedBefore),
		AfterCreated: timeOrNil(after.CreatedAt), AfterID: nonEmpty(after.Instance), MaxRows: int32(size + 1)})
	if err != nil {
		return provider.InstancePage{}, classify("list instances", "", err)
	}
	infos := make([]provider.InstanceInfo, len(rows))
	for i, r := range rows {
		infos[i] = provider.InstanceInfo{Instance: r.InstanceID, OrchestrationName: r.OrchestrationName,
			Version: r.OrchestrationVersion, CurrentExecutionID: r.CurrentExecutionID,
			ParentInstance: deref(r.ParentInstanceID), CustomStatus: r.CustomStatus,
			CustomStatusVersion: r.CustomStatusVersion, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
			Status: provider.ExecutionStatus(r.Status), Output: r.Output, LastError: encode.DecodeCause(deref(r.LastError))}
	}
	return provider.NextPage(infos, size), nil
}

// nonEmpty is s, or NULL for "".
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ListChildren implements provider.Admin.
func (p *Provider) ListChildren(ctx context.Context, req provider.InstanceRequest) ([]string, error) {
	ids, err := queries.InstanceChildren(ctx, p.pool, req.Instance)
	return ids, classify("list children", "", err)
}

// ListExecutions implements provider.Admin.
func (p *Provider) ListExecutions(ctx context.Context, req provider.InstanceRequest) ([]int64, error) {
	ids, err := queries.InstanceExecutions(ctx, p.pool, req.Instance)
	return ids, classify("list executions", "", err)
}

// GetInstanceInfo implements provider.Admin.
func (p *Provider) GetInstanceInfo(ctx context.Context, req provider.InstanceRequest) (provider.InstanceInfo, error) {
	instance := req.Instance
	const op = "get instance info"
	row, err := queries.InstanceInfo(ctx, p.pool, instance)
	if errors.Is(err, pgx.ErrNoRows) {
		return provider.InstanceInfo{Instance: instance}, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return provider.InstanceInfo{Instance: instance}, classify(op, instance, err)
	}
	return provider.InstanceInfo{Instance: instance, OrchestrationName: row.OrchestrationName,
		Version: row.OrchestrationVersion, CurrentExecutionID: row.CurrentExecutionID,
		ParentInstance: deref(row.ParentInstanceID), CustomStatus: row.CustomStatus,
		CustomStatusVersion: row.CustomStatusVersion, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
		Status: provider.ExecutionStatus(deref(row.Status)), Output: deref(row.Output),
		LastError: encode.DecodeCause(deref(row.LastError))}, nil
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
	row, err := queries.ExecutionInfo(ctx, p.pool, dbsqlc.ExecutionInfoParams{InstanceID: instance, ExecutionID: executionID})
	if errors.Is(err, pgx.ErrNoRows) {
		return info, provider.Permanent(op, instance, provider.ErrNotFound)
	}
	if err != nil {
		return info, classify(op, instance, err)
	}
	info.Status, info.Output, info.StartedAt = provider.ExecutionStatus(row.Status), deref(row.Output), row.StartedAt
	info.CompletedAt, info.EventCount = deref(row.CompletedAt), row.EventCount
	return info, nil
}

// GetSystemMetrics implements provider.Admin.
func (p *Provider) GetSystemMetrics(ctx context.Context) (provider.SystemMetrics, error) {
	r, err := queries.SystemMetrics(ctx, p.pool)
	return provider.SystemMetrics{TotalInstances: r.TotalInstances, Running: r.Running, Stalled: r.Stalled, Pending: r.Pending, Completed: r.Completed,
		Failed: r.Failed, Terminated: r.Terminated, TotalExecutions: r.TotalExecutions, TotalEvents: r.TotalEvents,
	}, classify("get system metrics", "", err)
}

// GetQueueDepths implements provider.Admin.
func (p *Provider) GetQueueDepths(ctx context.Context) (provider.QueueDepths, error) {
	r, err := queries.QueueDepths(ctx, p.pool)
	return provider.NewQueueDepths(r.Orchestrator, r.Worker, r.Delayed, r.Locked, r.OldestOrchestrator, r.OldestWorker),
		classify("get queue depths", "", err)
}

// GetBacklog implements provider.Admin.
func (p *Provider) GetBacklog(ctx context.Context) (provider.Backlog, error) {
	rows, err := queries.Backlog(ctx, p.pool)
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
	parent, err := queries.InstanceParent(ctx, p.pool, instance)
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
	ids, err := queries.InstanceTree(ctx, p.pool, root)
	if err != nil {
		return tree, classify(op, "", err)
	}
	if len(ids) == 0 {
		return tree, provider.Permanent(op, root, provider.ErrNotFound)
	}
	tree.Instances = ids
	return tree, nil
}

// DeleteInstances implements provider.Admin: one function call, so all or none.
func (p *Provider) DeleteInstances(ctx context.Context, req provider.DeleteRequest) (provider.DeleteResult, error) {
	r, err := queries.DeleteInstances(ctx, p.pool, dbsqlc.DeleteInstancesParams{Instances: nonNil(req.Instances), Force: req.Force})
	if err != nil {
		return provider.DeleteResult{}, classify("delete instances", "", err)
	}
	p.announce(orchestratorChannel) // a freed lock may let waiting messages run
	return deleteResult(dbsqlc.DeleteBulkRow(r)), nil
}

// DeleteInstancesBulk implements provider.Admin.
func (p *Provider) DeleteInstancesBulk(ctx context.Context, f provider.DeleteFilter) (provider.DeleteResult, error) {
	const op = "bulk delete instances"
	if f.Limit < 0 {
		return provider.DeleteResult{}, encode.Invalid(op, "", "limit must not be negative, got %d", f.Limit)
	}
	r, err := queries.DeleteBulk(ctx, p.pool, dbsqlc.DeleteBulkParams{Instances: nonNil(f.Instances),
		CompletedBefore: timeOrNil(f.CompletedBefore), MaxInstances: int32(min(f.Limit, math.MaxInt32))})
	if err != nil {
		return provider.DeleteResult{}, classify(op, "", err)
	}
	return deleteResult(r), nil
}

func deleteResult(r dbsqlc.DeleteBulkRow) provider.DeleteResult {
	return provider.DeleteResult{InstancesDeleted: deref(r.InstancesDeleted), ExecutionsDeleted: deref(r.ExecutionsDeleted),
		EventsDeleted: deref(r.EventsDeleted), MessagesDeleted: deref(r.MessagesDeleted)}
}

// timeOrNil is t, or nil (SQL NULL: no bound) for the zero time.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// PruneExecutions implements provider.Admin.
func (p *Provider) PruneExecutions(ctx context.Context, req provider.PruneRequest) (provider.PruneResult, error) {
	instance, opts := req.Instance, req.Options
	const op = "prune executions"
	if opts.KeepLast < 0 {
		return provider.PruneResult{}, encode.Invalid(op, instance, "keep-last must not be negative, got %d", opts.KeepLast)
	}
	r, err := queries.PruneExecutions(ctx, p.pool, dbsqlc.PruneExecutionsParams{InstanceID: instance,
		KeepLast: int32(min(opts.KeepLast, math.MaxInt32)), CompletedBefore: timeOrNil(opts.CompletedBefore)})
	if err != nil {
		return provider.PruneResult{}, classify(op, instance, err)
	}
	return provider.PruneResult{ExecutionsDeleted: deref(r.ExecutionsDeleted), EventsDeleted: deref(r.EventsDeleted)}, nil
}

// nonNil is s, or an empty slice for nil: pgx sends a nil slice as NULL,
// which the functions' array parameters do not expect.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ListQueuedActivities implements provider.Admin.
func (p *Provider) ListQueuedActivities(ctx context.Context, req provider.InstanceRequest) ([]provider.QueuedActivity, error) {
	rows, err := queries.QueuedActivities(ctx, p.pool, dbsqlc.QueuedActivitiesParams{InstanceID: req.Instance, MaxRows: provider.MaxQueuedActivities})
	if err != nil {
		return nil, classify("list queued activities", req.Instance, err)
	}
	out := make([]provider.QueuedActivity, len(rows))
	for i, r := range rows {
		out[i] = provider.QueuedActivity{ExecutionID: r.ExecutionID, ActivityID: r.ActivityID, Name: r.Name, Tag: r.Tag,
			Queued: r.CreatedAt, Attempts: int(r.AttemptCount), Leased: r.Leased}
	}
	return out, nil
}
