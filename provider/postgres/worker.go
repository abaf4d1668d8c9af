package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
)

// FetchWorkItem implements provider.Provider.
func (p *Provider) FetchWorkItem(ctx context.Context, req provider.FetchWorkRequest) (*provider.WorkItemLease, error) {
	lockTimeout, pollTimeout := req.LockFor, req.PollFor
	const op = "fetch work item"
	if err := encode.CheckTimeouts(op, lockTimeout, pollTimeout); err != nil {
		return nil, err
	}
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	var lease *provider.WorkItemLease
	err := wake.Poll(ctx, pollTimeout, p.opts.PollInterval, p.workerWork, nil, p.closed, func() (bool, time.Time, error) {
		var err error
		lease, err = p.lockWorkItem(ctx, lockTimeout)
		return lease != nil, time.Time{}, classify(op, "", err)
	})
	return lease, err
}

func (p *Provider) lockWorkItem(ctx context.Context, lockTimeout time.Duration) (*provider.WorkItemLease, error) {
	l := &provider.WorkItemLease{}
	var ref provider.WorkItem
	var data, state string
	var id int64
	err := p.pool.QueryRow(ctx, `SELECT * FROM dx_fetch_work_item($1)`, lockTimeout.Milliseconds()).
		Scan(&l.LockToken, &l.AttemptCount, &ref.Instance, &ref.ExecutionID, &ref.ID, &data, &state, &id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l.State = provider.ExecutionState(state)
	decodeLease(l, ref, data, id)
	return l, nil
}

// Activity commits an activity's result.
func (ps paths) Activity(ctx context.Context, lockToken string, completion *provider.WorkItem) error {
	p := ps.p
	return p.ackWork(ctx, lockToken, completion, nil)
}

// ActivityQuietly commits an activity's result quietly: the check needs the
// instance's incarnation, from the history cache: when the cache does not
// hold the history the caller judged from, the ack is plain.
func (ps paths) ActivityQuietly(ctx context.Context, lockToken string, completion provider.WorkItem, lastEvent int64) (bool, error) {
	p := ps.p
	incarnation, ok := p.hist.Holds(completion.Instance, completion.ExecutionID, lastEvent)
	if !ok {
		return false, p.ackWork(ctx, lockToken, &completion, nil)
	}
	check := &quietCheck{incarnation: incarnation, execution: completion.ExecutionID, lastEvent: lastEvent}
	err := p.ackWork(ctx, lockToken, &completion, check)
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

// AbandonWorkItem implements provider.Provider.
func (p *Provider) AbandonWorkItem(ctx context.Context, req provider.AbandonRequest) error {
	lockToken, delay, ignoreAttempt := req.LockToken, req.Delay, req.IgnoreAttempt
	const op = "abandon work item"
	if delay < 0 {
		return encode.Invalid(op, "", "delay must not be negative, got %v", delay)
	}
	_, err := p.pool.Exec(ctx, `SELECT dx_abandon_work_item($1, $2, $3)`, lockToken, delay.Milliseconds(), ignoreAttempt)
	if err == nil && delay == 0 {
		p.announce(workerChannel)
	}
	return classify(op, "", err)
}

// RenewWorkItemLock implements provider.Provider.
func (p *Provider) RenewWorkItemLock(ctx context.Context, req provider.RenewRequest) (provider.ExecutionState, error) {
	lockToken, extendFor := req.LockToken, req.ExtendFor
	const op = "renew work item lock"
	if extendFor <= 0 {
		return "", encode.Invalid(op, "", "extension must be positive, got %v", extendFor)
	}
	var state string
	err := p.pool.QueryRow(ctx, `SELECT dx_renew_work_item($1, $2)`, lockToken, extendFor.Milliseconds()).Scan(&state)
	if err != nil {
		return "", classify(op, "", err)
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
	_, err = p.pool.Exec(ctx, `SELECT dx_enqueue_orchestrator($1, $2, $3, $4)`, item.Instance, data, timerDue(item), delay.Milliseconds())
	if err == nil {
		p.announce(orchestratorChannel)
	}
	return classify(op, item.Instance, err)
}

// SendToInstance implements provider.Provider.
func (p *Provider) SendToInstance(ctx context.Context, item provider.WorkItem) error {
	const op = "send to instance"
	data, err := encode.EncodeItem(op, item, false)
	if err != nil {
		return err
	}
	_, err = p.pool.Exec(ctx, `SELECT dx_send_to_instance($1, $2)`, item.Instance, data)
	if err == nil {
		p.announce(orchestratorChannel)
	}
	return classify(op, item.Instance, err)
}

// StartQueued implements provider.Admin.
func (p *Provider) StartQueued(ctx context.Context, req provider.InstanceRequest) (bool, error) {
	instance := req.Instance
	var queued bool
	err := p.pool.QueryRow(ctx, `SELECT dx_start_queued($1)`, instance).Scan(&queued)
	return queued, classify("start queued", instance, err)
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
	_, err = p.pool.Exec(ctx, `SELECT dx_enqueue_worker($1, $2, $3, $4, $5)`, item.Instance, item.ExecutionID, item.ID, data, delay.Milliseconds())
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
