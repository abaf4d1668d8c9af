package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/histcache"
)

var (
	_ provider.CachedTurnCommitter = (*Provider)(nil)
	_ provider.CachedTimerFetcher  = (*Provider)(nil)
)

// CachedTurn implements provider.CachedTurnCommitter from the history cache.
func (p *Provider) CachedTurn(instance string, execution int64, msg provider.WorkItem) *provider.OrchestrationItem {
	return p.hist.CachedTurn(instance, execution, msg)
}

// CommitCachedTurn implements provider.CachedTurnCommitter: one transaction
// (in a group commit) deletes the activity's item, locks the instance under
// a token of our own when it is unchanged (dx_claim_cached_turns, DX008
// otherwise) and acks the turn under that token.
func (p *Provider) CommitCachedTurn(ctx context.Context, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck,
	lease []int, activityLockTimeout time.Duration) ([]*provider.WorkItemLease, error) {
	const op = "commit cached turn"
	want, err := histcache.CheckCommit(op, workToken, turn, ack, lease, activityLockTimeout)
	if err != nil {
		return nil, err
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return nil, err
	}
	if want.Queued != "" {
		defer p.inFlight.Done(turn.Instance)
	}
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	claim := &cachedClaim{instance: turn.Instance, token: uuid.NewString(), lockMs: activityLockTimeout.Milliseconds(),
		incarnation: want.Incarnation, execution: want.Execution, lastEvent: want.LastEvent}
	acked := &turnAck{token: claim.token, enc: enc, lease: lease, leaseFor: activityLockTimeout}
	work := commitWork{claim: claim, ack: acked}
	if want.Queued != "" {
		claim.queued = &want.Queued
	} else {
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
	// queued is the timer message the turn consumes, in stored form; nil
	// for an activity's turn (its item is acked by the batch's workAck).
	queued *string
}

func queueCachedClaims(b *pgx.Batch, claims []*cachedClaim) {
	n := len(claims)
	instances, tokens := make([]string, n), make([]string, n)
	incarnations, executions, lastEvents := make([]int64, n), make([]int64, n), make([]int64, n)
	queued := make([]*string, n)
	var lockMs int64
	for i, c := range claims {
		instances[i], tokens[i], queued[i] = c.instance, c.token, c.queued
		incarnations[i], executions[i], lastEvents[i] = c.incarnation, c.execution, c.lastEvent
		lockMs = max(lockMs, c.lockMs)
	}
	b.Queue(`SELECT dx_claim_cached_turns($1, $2, $3, $4, $5, $6, $7)`, instances, tokens, lockMs, incarnations, executions, lastEvents, queued)
}
