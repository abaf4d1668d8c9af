package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/storeengine"
	"github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"
)

// LockWork implements storeengine.Driver.
func (d driver) LockWork(ctx context.Context, w storeengine.WorkParams) (*provider.WorkItemLease, error) {
	lease, err := d.p.lockWorkItem(ctx, w)
	return lease, classify("fetch work item", "", err)
}

func (p *Provider) lockWorkItem(ctx context.Context, w storeengine.WorkParams) (*provider.WorkItemLease, error) {
	params := dbsqlc.WorkItemFetchParams{LockMs: w.LockFor.Milliseconds(),
		AnyTag: w.Tags.Any, Untagged: w.Tags.TakesUntagged(), Tags: nonNil(w.Tags.Tags)}
	if c := w.Sessions; c != nil {
		params.WorkerID, params.SessionMs, params.MaxSessions = &c.WorkerID, c.LockFor.Milliseconds(), int32(c.MaxSessions)
	}
	r, err := queries.WorkItemFetch(ctx, p.pool, params)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l := &provider.WorkItemLease{LockToken: r.LockToken, AttemptCount: int(r.AttemptCount), State: provider.ExecutionState(r.State)}
	ref := provider.WorkItem{Instance: r.InstanceID, ExecutionID: r.ExecutionID, ID: r.ActivityID}
	decodeLease(l, ref, r.WorkItem, r.ItemID)
	return l, nil
}

// Activity commits an activity's result.
func (d driver) Activity(ctx context.Context, lockToken string, completion *provider.WorkItem) error {
	return d.p.ackWork(ctx, lockToken, completion, nil)
}

// ActivityQuietly commits an activity's result quietly when the instance is
// still as q says.
func (d driver) ActivityQuietly(ctx context.Context, lockToken string, completion provider.WorkItem, q storeengine.QuietCheck) (bool, error) {
	check := &quietCheck{incarnation: q.Incarnation, execution: q.Execution, lastEvent: q.LastEvent}
	err := d.p.ackWork(ctx, lockToken, &completion, check)
	return err == nil && check.ok, err
}

// ackWork acks an activity, queueing its completion (if any), and wakes the
// dispatchers unless quiet is set and found the instance unchanged.
func (p *Provider) ackWork(ctx context.Context, lockToken string, completion *provider.WorkItem, quiet *quietCheck) error {
	const op = "ack work item"
	if lockToken == "" {
		return encode.LockNotHeld(op, "", "empty lock token")
	}
	var instance, data *string
	if completion != nil {
		d, err := encode.EncodeItem(op, *completion, false)
		if err != nil {
			return err
		}
		instance, data = &completion.Instance, &d
	}
	err := p.commit(ctx, commitWork{workAck: &workAck{token: lockToken, instance: instance, completion: data, quiet: quiet}})
	if err == nil && completion != nil && (quiet == nil || !quiet.ok) {
		p.announce(orchestratorChannel)
	}
	return classify(op, "", err)
}

// AbandonWork implements storeengine.Driver.
func (d driver) AbandonWork(ctx context.Context, a storeengine.AbandonParams) error {
	p := d.p
	err := queries.WorkItemAbandon(ctx, p.pool, dbsqlc.WorkItemAbandonParams{LockToken: a.LockToken, DelayMs: a.Delay.Milliseconds(), IgnoreAttempt: a.IgnoreAttempt})
	if err == nil && a.Delay == 0 {
		p.announce(workerChannel)
	}
	return classify("abandon work item", "", err)
}

// RenewWork implements storeengine.Driver.
func (d driver) RenewWork(ctx context.Context, req provider.RenewRequest) (provider.ExecutionState, error) {
	state, err := queries.WorkItemRenew(ctx, d.p.pool, dbsqlc.WorkItemRenewParams{LockToken: req.LockToken, ExtendMs: req.ExtendFor.Milliseconds()})
	if err != nil {
		return "", classify("renew work item lock", "", err)
	}
	return provider.ExecutionState(state), nil
}

// EnqueueForOrchestrator implements provider.Admin.
func (p *Provider) EnqueueForOrchestrator(ctx context.Context, req provider.EnqueueRequest) error {
	item, delay := req.Item, req.Delay
	const op = "enqueue for orchestrator"
	if delay < 0 {
		return encode.Invalid(op, item.Instance, "delay must not be negative, got %v", delay)
	}
	data, err := encode.EncodeItem(op, item, false)
	if err != nil {
		return err
	}
	name, version := startColumns(item)
	err = queries.OrchestratorEnqueue(ctx, p.pool, dbsqlc.OrchestratorEnqueueParams{InstanceID: item.Instance, WorkItem: data,
		VisibleMs: timerDue(item), DelayMs: delay.Milliseconds(), StartName: name, StartVersion: version})
	if err == nil {
		p.announce(orchestratorChannel)
	}
	return classify(op, item.Instance, err)
}

// SendToInstance implements provider.Provider.
func (p *Provider) SendToInstance(ctx context.Context, item provider.WorkItem) error {
	const op = "send"
	data, err := encode.EncodeItem(op, item, false)
	if err != nil {
		return err
	}
	err = queries.InstanceSend(ctx, p.pool, dbsqlc.InstanceSendParams{InstanceID: item.Instance, WorkItem: data})
	if err == nil {
		p.announce(orchestratorChannel)
	}
	return classify(op, item.Instance, err)
}

// StartQueued implements provider.Admin.
func (p *Provider) StartQueued(ctx context.Context, req provider.InstanceRequest) (bool, error) {
	queued, err := queries.StartQueued(ctx, p.pool, req.Instance)
	return queued, classify("start queued", req.Instance, err)
}

// EnqueueForWorker implements provider.Admin.
func (p *Provider) EnqueueForWorker(ctx context.Context, req provider.EnqueueRequest) error {
	item, delay := req.Item, req.Delay
	const op = "enqueue for worker"
	if delay < 0 {
		return encode.Invalid(op, item.Instance, "delay must not be negative, got %v", delay)
	}
	data, err := encode.EncodeItem(op, item, true)
	if err != nil {
		return err
	}
	err = queries.WorkItemEnqueue(ctx, p.pool, dbsqlc.WorkItemEnqueueParams{InstanceID: item.Instance, ExecutionID: item.ExecutionID,
		ActivityID: item.ID, WorkItem: data, DelayMs: delay.Milliseconds(), Tag: nonEmpty(item.Tag), Session: nonEmpty(item.Session)})
	if err == nil {
		p.announce(workerChannel)
	}
	return classify(op, item.Instance, err)
}

// decodeLease fills the lease's item from its stored data; an undecodable
// item keeps its reference and reports why.
func decodeLease(l *provider.WorkItemLease, ref provider.WorkItem, data string, id int64) {
	l.Item, l.DecodeError = provider.DecodeWorkItem(data)
	if l.DecodeError != nil {
		l.DecodeError = &provider.CorruptDataError{Instance: ref.Instance, What: fmt.Sprintf("worker queue item %d", id), Err: l.DecodeError}
		l.Item = provider.WorkItem{Kind: provider.WorkActivityExecute, Instance: ref.Instance, ExecutionID: ref.ExecutionID, ID: ref.ID}
	}
}

// QueueRewind implements provider.Admin: the instance row's lock orders it
// against another rewind; the new execution is opened in the same
// transaction.
func (p *Provider) QueueRewind(ctx context.Context, req provider.RewindRequest) error {
	const op = "rewind"
	item := req.Item
	if err := req.Validate(); err != nil {
		return provider.Permanent(op, item.Instance, err)
	}
	data, err := encode.EncodeItem(op, item, false)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		row, err := queries.RewindTarget(ctx, tx, item.Instance)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return provider.Permanent(op, item.Instance, provider.ErrNotFound)
		case err != nil:
			return err
		}
		target := storeengine.RewindTarget{Current: row.CurrentExecutionID, Status: provider.ExecutionStatus(row.Status), Parent: row.Parent, Queued: row.Queued}
		if err := storeengine.CheckRewind(target, req); err != nil {
			return provider.Permanent(op, item.Instance, err)
		}
		if err := queries.RewindOpenExecution(ctx, tx, dbsqlc.RewindOpenExecutionParams{InstanceID: item.Instance, ExecutionID: item.ExecutionID}); err != nil {
			return err
		}
		return queries.RewindEnqueue(ctx, tx, dbsqlc.RewindEnqueueParams{InstanceID: item.Instance, WorkItem: data})
	})
	if err == nil {
		p.announce(orchestratorChannel)
		p.announceStatus(announcedChange{Instance: item.Instance})
	}
	return classify(op, item.Instance, err)
}
