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

var _ provider.CachedTurnCommitter = (*Provider)(nil)

// CachedTurn implements provider.CachedTurnCommitter from the history cache.
func (p *Provider) CachedTurn(instance string, execution int64, msg provider.WorkItem) *provider.OrchestrationItem {
	return p.hist.Turn(instance, execution, msg)
}

// CommitCachedTurn implements provider.CachedTurnCommitter: one transaction
// (in a group commit) deletes the activity's item, locks the instance under
// a token of our own when it is unchanged (dx_claim_cached_turns, DX008
// otherwise) and acks the turn under that token.
func (p *Provider) CommitCachedTurn(ctx context.Context, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck,
	lease []int, activityLockTimeout time.Duration) ([]*provider.WorkItemLease, error) {
	const op = "commit cached turn"
	if workToken == "" {
		return nil, encode.LockNotHeld(op, turn.Instance, "empty activity lock token")
	}
	incarnation, execution, lastEvent, ok := histcache.ParseTurnToken(turn.LockToken)
	if !ok {
		return nil, encode.Invalid(op, turn.Instance, "the turn was not built by CachedTurn")
	}
	if err := encode.CheckLeasing(op, ack, lease, activityLockTimeout); err != nil {
		return nil, err
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return nil, err
	}
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	claim := &cachedClaim{instance: turn.Instance, token: uuid.NewString(), lockMs: activityLockTimeout.Milliseconds(),
		incarnation: incarnation, execution: execution, lastEvent: lastEvent}
	acked := &turnAck{token: claim.token, enc: enc, lease: lease, leaseFor: activityLockTimeout}
	if err := p.commit(ctx, commitWork{workAck: &workAck{token: workToken}, claim: claim, ack: acked}); err != nil {
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
}

func queueCachedClaims(b *pgx.Batch, claims []*cachedClaim) {
	n := len(claims)
	instances, tokens := make([]string, n), make([]string, n)
	incarnations, executions, lastEvents := make([]int64, n), make([]int64, n), make([]int64, n)
	var lockMs int64
	for i, c := range claims {
		instances[i], tokens[i] = c.instance, c.token
		incarnations[i], executions[i], lastEvents[i] = c.incarnation, c.execution, c.lastEvent
		lockMs = max(lockMs, c.lockMs)
	}
	b.Queue(`SELECT dx_claim_cached_turns($1, $2, $3, $4, $5, $6)`, instances, tokens, lockMs, incarnations, executions, lastEvents)
}
