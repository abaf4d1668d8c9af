package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/duroxide/duroxide-go/provider/internal/group"
)

// Group commit of acks (provider/internal/group). Every ack is a
// transaction of its own, and a commit costs a round trip and a WAL flush
// however little it writes. Acks that arrive while batches are at the
// server go together in the next: one pgx batch, one implicit transaction,
// one commit, and one call of the ack function for all the batch's turn
// acks. A statement that fails (a stale lock token, a first turn refused, a
// deadlock) rolls that transaction back for every ack in it, so the batch's
// acks are then sent again one by one and each gets its own outcome; a
// batch that commits gives every ack success.
//
// Up to maxCommitLeaders batches are in flight at a time. One would leave
// all but one server core idle while acks queue (the server, not Go, is
// where an ack's time goes); more would make batches smaller and let them
// wait on each other's rows. Acks in concurrent batches touch different
// instances' rows but for rare cases (an activity's result acked while a
// turn in the other batch cancels it); PostgreSQL breaks such a deadlock
// after deadlock_timeout (1 s) and both batches' acks are sent again alone.
// dx_fetch_instance_items, which shares batches with acks, reads the
// instance lock before it locks anything, so it never waits on an ack in
// another batch.

// maxCommitBatch bounds how many acks share one transaction.
const maxCommitBatch = 32

// maxCommitLeaders bounds how many batches are in flight at once. With one,
// a fan-out took 2.6 transactions instead of 4.7 and the server 30% less CPU,
// but a burst of stale cached timer turns (each batch that holds one is sent
// again ack by ack) held every other ack back: timers fired 60-90 ms late.
const maxCommitLeaders = 2

// statements are a caller's own statements in a commit batch: queue adds
// them, read reads their results. read may run twice (batched, then alone):
// it must not keep state from a previous run.
type statements struct {
	queue func(b *pgx.Batch)
	read  func(br pgx.BatchResults) error
}

// commitWork is what one caller commits. A batch runs, in this order: one
// call for all its activity acks, one for all its claims of cached turns,
// every caller's statements, one call for
// all its turn acks (turn_ack.go), one call for all its fetches of
// instances' next turns. A statement's fixed cost is most of what a small
// ack costs, so each call does its part for the whole batch.
type commitWork struct {
	workAck *workAck
	// claim locks the instance of a turn built from the history cache, for
	// ack (cached_turn.go).
	claim  *cachedClaim
	before statements
	ack    *turnAck
	fetch  *instanceFetch
	// dueTimers are fetches of instances whose timers fell due: a poller's,
	// sharing the batch's call with the continuations (lockReadyInstances).
	dueTimers []*instanceFetch
}

// commitRequest is one caller's work in a commit batch.
type commitRequest = group.Request[commitWork]

// commit runs work in a transaction, possibly shared with other callers',
// and once it committed, updates the history cache with what it wrote and
// read and notes the timers it queued.
func (p *Provider) commit(ctx context.Context, work commitWork) error {
	err := p.commitShared(ctx, work)
	if err == nil {
		p.committed(work)
	}
	return err
}

func (p *Provider) commitShared(ctx context.Context, work commitWork) error {
	return p.commits.Run(group.NewRequest(ctx, work), p.sendCountedBatch)
}

// sendCountedBatch sends batch and counts it, for tests.
func (p *Provider) sendCountedBatch(batch []*commitRequest) {
	began := time.Now()
	p.sendCommitBatch(batch)
	p.commitBatches.Add(1)
	p.eng.RecordBatch(context.Background(), "commit", len(batch), time.Since(began))
}

// sendCommitBatch sends batch's requests in one transaction and answers each.
func (p *Provider) sendCommitBatch(batch []*commitRequest) {
	live := batch[:0:0]
	for _, req := range batch {
		if err := req.Ctx.Err(); err != nil {
			req.Answer(err)
			continue
		}
		if err := claimedEarlier(req, live); err != nil {
			req.Answer(err)
			continue
		}
		live = append(live, req)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		live[0].Answer(p.sendAlone(live[0]))
		return
	}
	b, calls := p.queueWork(live)
	p.commitSends.Add(1)
	// No caller's context: one caller giving up must not end a transaction
	// that commits the others' acks.
	br := p.pool.SendBatch(context.Background(), b)
	err := readWork(br, live, calls)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		for _, req := range live {
			req.Answer(nil)
		}
	case errors.As(err, &pgErr):
		// A statement failed: the server rolled the whole batch back.
		if stale := staleClaimants(pgErr, live, calls.claims); stale != nil {
			p.sendCommitBatch(slices.DeleteFunc(live, func(r *commitRequest) bool {
				if err, ok := stale[r]; ok {
					r.Answer(err)
					return true
				}
				return false
			}))
			return
		}
		for _, req := range live {
			req.Answer(p.sendAlone(req))
		}
	default:
		// The connection failed: whether the batch committed is unknown,
		// as it would be for a single ack.
		for _, req := range live {
			req.Answer(err)
		}
	}
}

// staleClaimants returns the requests whose claims of cached turns err says
// were stale, each with the error it gets (dx_claim_cached_turns lists them
// in its DETAIL, a line 'claim K: reason' each), or nil. Those requests fail
// as they would alone (their instances changed, or another fetch took them)
// and the rest of the batch can be sent again together: a stale cached turn,
// which a busy fleet makes now and then, costs one more round trip rather
// than a transaction per ack in its batch.
func staleClaimants(pgErr *pgconn.PgError, reqs []*commitRequest, claims []*cachedClaim) map[*commitRequest]error {
	if pgErr.Code != "DX008" || len(claims) == 0 {
		return nil
	}
	stale := map[*commitRequest]error{}
	for line := range strings.Lines(pgErr.Detail) {
		var k int
		head, reason, ok := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
		if _, err := fmt.Sscanf(head, "claim %d", &k); !ok || err != nil || k < 1 || k > len(claims) {
			return nil
		}
		i := slices.IndexFunc(reqs, func(r *commitRequest) bool { return r.Work.claim == claims[k-1] })
		if i < 0 {
			return nil
		}
		if _, seen := stale[reqs[i]]; !seen {
			own := *pgErr
			own.Message, own.Detail = reason, ""
			stale[reqs[i]] = &own
		}
	}
	if len(stale) == 0 {
		return nil
	}
	return stale
}

// sendAlone sends req's work in a transaction of its own.
func (p *Provider) sendAlone(req *commitRequest) error {
	reqs := []*commitRequest{req}
	b, calls := p.queueWork(reqs)
	p.commitSends.Add(1)
	br := p.pool.SendBatch(req.Ctx, b)
	err := readWork(br, reqs, calls)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// queueWork queues reqs' work in commitWork's order.
func (p *Provider) queueWork(reqs []*commitRequest) (*pgx.Batch, batchCalls) {
	b := &pgx.Batch{}
	var calls batchCalls
	for _, req := range reqs {
		if w := req.Work.workAck; w != nil {
			calls.workAcks = append(calls.workAcks, w)
		}
		if c := req.Work.claim; c != nil {
			calls.claims = append(calls.claims, c)
		}
		if a := req.Work.ack; a != nil {
			calls.acks = append(calls.acks, a)
		}
		if f := req.Work.fetch; f != nil {
			calls.fetches = append(calls.fetches, f)
		}
		calls.fetches = append(calls.fetches, req.Work.dueTimers...)
	}
	if len(calls.workAcks) > 0 {
		queueWorkAcks(b, calls.workAcks)
		calls.quietChecks = queueQuietChecks(b, calls.workAcks)
	}
	if len(calls.claims) > 0 {
		queueCachedClaims(b, calls.claims)
	}
	for _, req := range reqs {
		if req.Work.before.queue != nil {
			req.Work.before.queue(b)
		}
	}
	if len(calls.acks) > 0 {
		queueAcks(b, calls.acks)
	}
	if len(calls.fetches) > 0 {
		p.queueInstanceFetches(b, calls.fetches)
	}
	return b, calls
}

// batchCalls are the parts of a batch's work sent as one call each.
type batchCalls struct {
	workAcks    []*workAck
	quietChecks bool
	claims      []*cachedClaim
	acks        []*turnAck
	fetches     []*instanceFetch
}

// readWork reads the results of what queueWork queued, in its order.
func readWork(br pgx.BatchResults, reqs []*commitRequest, calls batchCalls) error {
	if len(calls.workAcks) > 0 {
		if err := readWorkAcks(br); err != nil {
			return err
		}
		if calls.quietChecks {
			if err := readQuietChecks(br, calls.workAcks); err != nil {
				return err
			}
		}
	}
	if len(calls.claims) > 0 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	for _, req := range reqs {
		if req.Work.before.read != nil {
			if err := req.Work.before.read(br); err != nil {
				return err
			}
		}
	}
	if len(calls.acks) > 0 {
		if err := readAcks(br, calls.acks); err != nil {
			return err
		}
	}
	if len(calls.fetches) > 0 {
		return readInstanceFetches(br, calls.fetches)
	}
	return nil
}
