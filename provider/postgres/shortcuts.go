package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

var (
	_ provider.ActivityLeaser    = (*Provider)(nil)
	_ provider.ActivityContinuer = (*Provider)(nil)
)

// leaseQuery leases worker items the ack before it inserted, in the same
// transaction, in the order asked (ord).
const leaseQuery = `UPDATE worker_queue w SET lock_token = gen_random_uuid()::text,
	locked_until = now() + $4 * interval '1 millisecond', attempt_count = w.attempt_count + 1
	FROM unnest($1::TEXT[], $2::BIGINT[], $3::BIGINT[]) WITH ORDINALITY AS u(inst, ex, act, ord)
	WHERE w.instance_id = u.inst AND w.execution_id = u.ex AND w.activity_id = u.act AND w.lock_token IS NULL
	RETURNING u.ord, w.lock_token, w.attempt_count, w.instance_id, w.execution_id, w.activity_id, w.work_item,
	          dx_execution_state(w.instance_id, w.execution_id), w.id`

// AckOrchestrationItemLeasing implements provider.ActivityLeaser: the ack and
// an UPDATE leasing the items it inserted, in one batch (one transaction).
func (p *Provider) AckOrchestrationItemLeasing(ctx context.Context, lockToken string, ack provider.OrchestrationAck, lease []int, lockTimeout time.Duration) ([]*provider.WorkItemLease, error) {
	const op = "ack orchestration item"
	if lockToken == "" {
		return nil, encode.LockNotHeld(op, "", "empty lock token")
	}
	if err := encode.CheckTimeouts(op, lockTimeout, 0); err != nil {
		return nil, err
	}
	var insts []string
	var execs, acts []int64
	for _, i := range lease {
		if i < 0 || i >= len(ack.WorkerItems) {
			return nil, encode.Invalid(op, "", "lease position %d is not one of the ack's %d worker items", i, len(ack.WorkerItems))
		}
		w := ack.WorkerItems[i]
		insts, execs, acts = append(insts, w.Instance), append(execs, w.ExecutionID), append(acts, w.ID)
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return nil, err
	}
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	leases := make([]*provider.WorkItemLease, len(lease))
	res, err := p.sendAck(ctx, lockToken, enc, func(b *pgx.Batch) func(pgx.BatchResults) error {
		b.Queue(leaseQuery, insts, execs, acts, lockTimeout.Milliseconds())
		return func(br pgx.BatchResults) error { return readLeases(br, leases) }
	})
	if err != nil {
		return nil, classify(op, "", err)
	}
	got := leases[:0]
	for _, l := range leases {
		if l != nil {
			got = append(got, l)
		}
	}
	// Workers are woken only for what this process does not run.
	p.announceAck(res, len(got) < len(enc.WorkerItems))
	return got, nil
}

func readLeases(br pgx.BatchResults, leases []*provider.WorkItemLease) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ord int64
		l := &provider.WorkItemLease{}
		var ref provider.WorkItem
		var data, state string
		var id int64
		if err := rows.Scan(&ord, &l.LockToken, &l.AttemptCount, &ref.Instance, &ref.ExecutionID, &ref.ID, &data, &state, &id); err != nil {
			return err
		}
		l.State = provider.ExecutionState(state)
		decodeLease(l, ref, data, id)
		if ord >= 1 && int(ord) <= len(leases) {
			leases[ord-1] = l
		}
	}
	return rows.Err()
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

// AckWorkItemContinuing implements provider.ActivityContinuer: the activity's
// ack and the fetch of its instance, in one batch (one transaction), so the
// fetch sees the completion the ack queued.
func (p *Provider) AckWorkItemContinuing(ctx context.Context, lockToken string, completion provider.WorkItem, lockTimeout time.Duration) (*provider.OrchestrationItem, error) {
	const op = "ack work item"
	if lockToken == "" {
		return nil, encode.LockNotHeld(op, "", "empty lock token")
	}
	if err := encode.CheckTimeouts(op, lockTimeout, 0); err != nil {
		return nil, err
	}
	data, err := encode.EncodeItem(op, completion, false)
	if err != nil {
		return nil, err
	}
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT dx_ack_work_item($1, $2, $3)`, lockToken, completion.Instance, data)
	b.Queue(`SELECT * FROM dx_fetch_instance_item($1, $2)`, completion.Instance, lockTimeout.Milliseconds())
	br := p.pool.SendBatch(ctx, b)
	item, err := readContinuation(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, classify(op, completion.Instance, err)
	}
	if item == nil {
		p.announce(orchestratorChannel)
	}
	return item, nil
}

func readContinuation(br pgx.BatchResults) (*provider.OrchestrationItem, error) {
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var item *provider.OrchestrationItem
	for rows.Next() {
		if item, _, err = scanOrchestrationItem(rows); err != nil {
			return nil, err
		}
	}
	return item, rows.Err()
}
