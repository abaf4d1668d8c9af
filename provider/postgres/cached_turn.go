package postgres

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/histcache"
)

// CachedTurn commits a turn built from the history cache: one transaction
// (in a group commit) deletes the activity's item, deletes the queued
// messages the turn consumes and locks the instance under a token of our own
// when it is unchanged (dx_claim_cached_turns, DX008 otherwise) and acks the
// turn under that token.
func (d driver) CachedTurn(ctx context.Context, workToken string, t provider.TurnCommit) ([]*provider.WorkItemLease, error) {
	p, turn, ack, lease, activityLockTimeout := d.p, t.Cached, t.Ack, t.Lease, t.LeaseFor
	const op = "commit cached turn"
	want, err := histcache.CheckCommit(op, workToken, turn, ack, lease, activityLockTimeout)
	if err != nil {
		return nil, err
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return nil, err
	}
	if err := p.eng.CheckOpen(op); err != nil {
		return nil, err
	}
	claim := &cachedClaim{instance: turn.Instance, token: uuid.NewString(), lockMs: claimFor.Milliseconds(),
		incarnation: want.Incarnation, execution: want.Execution, lastEvent: want.LastEvent, queued: want.Queued}
	acked := &turnAck{token: claim.token, enc: enc, lease: lease, leaseFor: activityLockTimeout}
	work := commitWork{claim: claim, ack: acked}
	if workToken != "" {
		work.workAck = &workAck{token: workToken}
	}
	if err := p.commit(ctx, work); err != nil {
		return nil, classify(op, turn.Instance, err)
	}
	got := leasesOf(acked.res, ack, lease)
	p.announceAck(acked.res, len(got) < len(enc.WorkerItems))
	return got, nil
}

// cachedClaim is one cached turn's claim of its instance in a commit batch:
// the batch's are one call of dx_claim_cached_turns.
type cachedClaim struct {
	instance, token                           string
	lockMs, incarnation, execution, lastEvent int64
	// queued are the messages the turn consumes, in stored form: its timers,
	// or the quiet results an activity's turn delivers before the activity's
	// (whose item the batch's workAck acks).
	queued []string
}

// claimedEarlier returns ErrStale when req claims an instance for a cached
// turn that a request in earlier claims too: a batch carries one claim of an
// instance. Both turns were built from the instance as it was, so once the
// first commits the second is stale; sent together, their acks would hold
// one lock under two tokens and fail the whole batch.
func claimedEarlier(req *commitRequest, earlier []*commitRequest) error {
	c := req.Work.claim
	if c == nil {
		return nil
	}
	for _, e := range earlier {
		if e.Work.claim != nil && e.Work.claim.instance == c.instance {
			return encode.Stale("commit cached turn", c.instance, "another cached turn of the instance is in its commit batch")
		}
	}
	return nil
}

func queueCachedClaims(b *pgx.Batch, claims []*cachedClaim) {
	n := len(claims)
	instances, tokens := make([]string, n), make([]string, n)
	incarnations, executions, lastEvents := make([]int64, n), make([]int64, n), make([]int64, n)
	// The consumed messages, flattened: queued[j] belongs to claim of[j]
	// (1-based, as PL/pgSQL's loop counts).
	var of []int32
	var queued []string
	var lockMs int64
	for i, c := range claims {
		instances[i], tokens[i] = c.instance, c.token
		incarnations[i], executions[i], lastEvents[i] = c.incarnation, c.execution, c.lastEvent
		lockMs = max(lockMs, c.lockMs)
		for _, q := range c.queued {
			of = append(of, int32(i+1))
			queued = append(queued, q)
		}
	}
	b.Queue(`SELECT dx_claim_cached_turns($1, $2, $3, $4, $5, $6, $7, $8)`, instances, tokens, lockMs, incarnations, executions,
		lastEvents, of, queued)
}
