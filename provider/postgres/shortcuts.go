package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/histcache"
)

// TurnLeasing commits a locked turn and leases its chosen activities: the ack
// function inserts the items asked for already leased.
func (d driver) TurnLeasing(ctx context.Context, t provider.TurnCommit) ([]*provider.WorkItemLease, error) {
	p, lockToken, ack, lease, lockTimeout := d.p, t.LockToken, t.Ack, t.Lease, t.LeaseFor
	const op = "ack orchestration item"
	if lockToken == "" {
		return nil, encode.LockNotHeld(op, "", "empty lock token")
	}
	if err := encode.CheckLeasing(op, ack, lease, lockTimeout); err != nil {
		return nil, err
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return nil, err
	}
	if err := p.eng.CheckOpen(op); err != nil {
		return nil, err
	}
	turn := &turnAck{token: lockToken, enc: enc, lease: lease, leaseFor: lockTimeout, incarnation: histcache.NewIncarnation()}
	if err := p.commit(ctx, commitWork{ack: turn}); err != nil {
		return nil, classify(op, "", err)
	}
	got := leasesOf(turn.res, ack, lease)
	// Workers are woken only for what this process does not run.
	p.announceAck(turn.res, len(got) < len(enc.WorkerItems))
	return got, nil
}

// TurnNext commits a locked turn and locks the instance's next turn: the
// ack and a fetch of its instance in one batch (one transaction); the fetch
// finds the lock row the ack deleted gone and locks what became visible.
func (d driver) TurnNext(ctx context.Context, t provider.TurnCommit, lockTimeout time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error) {
	p, instance, lockToken, ack, lease, activityLockTimeout := d.p, t.Instance, t.LockToken, t.Ack, t.Lease, t.LeaseFor
	const op = "ack orchestration item"
	if lockToken == "" {
		return nil, nil, encode.LockNotHeld(op, instance, "empty lock token")
	}
	if err := encode.CheckLeasing(op, ack, lease, activityLockTimeout, lockTimeout); err != nil {
		return nil, nil, err
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return nil, nil, err
	}
	if err := p.eng.CheckOpen(op); err != nil {
		return nil, nil, err
	}
	turn := &turnAck{token: lockToken, enc: enc, lease: lease, leaseFor: activityLockTimeout, incarnation: histcache.NewIncarnation()}
	fetch := &instanceFetch{instance: instance, lockTimeout: lockTimeout}
	if err := p.commit(ctx, commitWork{ack: turn, fetch: fetch}); err != nil {
		return nil, nil, classify(op, instance, err)
	}
	res, next := turn.res, fetch.item
	if next != nil {
		// The continued turn takes what the ack queued for its instance.
		res.orchestratorPending = enc.WakesOthers(instance, time.Now().UnixMilli())
	}
	got := leasesOf(res, ack, lease)
	p.announceAck(res, len(got) < len(enc.WorkerItems))
	return got, next, nil
}

// FirstTurn commits a new instance's first turn (direct start): one transaction
// (in a group commit) locks the new instance under a token of our own, refusing
// with DX007 when it exists, is locked or has messages queued, and acks the
// turn under that token.
func (d driver) FirstTurn(ctx context.Context, t provider.TurnCommit) (bool, []*provider.WorkItemLease, error) {
	p, instance, ack, lease, lockTimeout := d.p, t.Instance, t.Ack, t.Lease, t.LeaseFor
	const op = "commit first turn"
	if err := encode.CheckFirstTurn(op, instance, ack, lease, lockTimeout); err != nil {
		return false, nil, err
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return false, nil, err
	}
	if err := p.eng.CheckOpen(op); err != nil {
		return false, nil, err
	}
	token := uuid.NewString()
	turn := &turnAck{token: token, enc: enc, lease: lease, leaseFor: lockTimeout, incarnation: histcache.NewIncarnation()}
	err = p.commit(ctx, commitWork{ack: turn, before: statements{
		queue: func(b *pgx.Batch) {
			b.Queue(`SELECT dx_lock_new_instance($1, $2, $3)`, instance, token, claimFor.Milliseconds())
		},
		read: func(br pgx.BatchResults) error { _, err := br.Exec(); return err },
	}})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "DX007" {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, classify(op, instance, err)
	}
	got := leasesOf(turn.res, ack, lease)
	p.announceAck(turn.res, len(got) < len(enc.WorkerItems))
	return true, got, nil
}

// leasesOf turns what the ack reports into leases: the items are the ack's
// own, inserted with attempt 1.
func leasesOf(res ackResult, ack provider.OrchestrationAck, lease []int) []*provider.WorkItemLease {
	got := make([]*provider.WorkItemLease, 0, len(lease))
	for k, i := range lease {
		if k >= len(res.leaseTokens) || k >= len(res.leaseStates) || res.leaseTokens[k] == nil || res.leaseStates[k] == nil {
			continue
		}
		got = append(got, &provider.WorkItemLease{
			LockToken:    *res.leaseTokens[k],
			AttemptCount: 1,
			Item:         ack.WorkerItems[i],
			State:        provider.ExecutionState(*res.leaseStates[k]),
		})
	}
	return got
}

// ActivityNext commits an activity's result and locks its instance's turn: the activity's
// ack and the fetch of its instance, in one batch (one transaction), so the
// fetch sees the completion the ack queued.
func (d driver) ActivityNext(ctx context.Context, lockToken string, completion provider.WorkItem, lockTimeout time.Duration) (*provider.OrchestrationItem, error) {
	p := d.p
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
	if err := p.eng.CheckOpen(op); err != nil {
		return nil, err
	}
	item, err := p.sendContinuing(ctx, commitWork{
		workAck: &workAck{token: lockToken, instance: &completion.Instance, completion: &data},
		fetch:   &instanceFetch{instance: completion.Instance, lockTimeout: lockTimeout},
	})
	if err != nil {
		return nil, classify(op, completion.Instance, err)
	}
	return item, nil
}

// sendContinuing commits work, a write and a fetch of the written
// instance's turn (in a group commit), and wakes the dispatchers when the
// instance could not be locked here.
func (p *Provider) sendContinuing(ctx context.Context, work commitWork) (*provider.OrchestrationItem, error) {
	if err := p.commit(ctx, work); err != nil {
		return nil, err
	}
	if work.fetch.item == nil {
		p.announce(orchestratorChannel)
	}
	return work.fetch.item, nil
}

// fetchInstanceQuery locks the named instances' turns, up to a number of them,
// and returns them.
const fetchInstanceQuery = `SELECT * FROM dx_fetch_instance_items($1, $2, $3, $4, $5, $6)`
