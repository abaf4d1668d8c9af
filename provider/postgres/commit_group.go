package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Group commit of acks. Every ack is a transaction of its own, and a commit
// costs a round trip and a WAL flush however little it writes. Acks that
// arrive while batches are at the server go together in the next: one pgx
// batch, one implicit transaction, one commit, and one call of the ack
// function for all the batch's turn acks. A statement that fails (a
// stale lock token, a first turn refused, a deadlock) rolls that transaction
// back for every ack in it, so the batch's acks are then sent again one by
// one and each gets its own outcome; a batch that commits gives every ack
// success.
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
// another batch. A caller that finds fewer batches in flight sends one
// itself (a leader). Once a batch (its own or another leader's) holds its
// ack, it sends no more and passes the lead to the oldest waiting caller
// that holds none: leading on would make it wait for others' acks.

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

// commitRequest is one caller's work waiting for a leader.
type commitRequest struct {
	ctx  context.Context
	work commitWork
	done chan error
	lead chan struct{} // closed when this caller is to send the next batches
	// hasLead is set when its caller is given a lead, by add or by release
	// (which closes lead), under commitGroup.mu.
	hasLead bool
	// taken is set when a leader takes it into a batch, under commitGroup.mu.
	taken bool
}

// commitGroup holds the requests waiting for a leader.
type commitGroup struct {
	mu      sync.Mutex
	pending []*commitRequest
	leading int
	leaders int // at most this many leading at once; 0 means maxCommitLeaders
}

// add queues req and reports whether its caller must lead.
func (g *commitGroup) add(req *commitRequest) (lead bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pending = append(g.pending, req)
	limit := g.leaders
	if limit == 0 {
		limit = maxCommitLeaders
	}
	if g.leading >= limit {
		return false
	}
	g.leading++
	// A lead passed to req now would be lost: its caller leads already and
	// never waits for one.
	req.hasLead = true
	return true
}

// take moves up to maxCommitBatch waiting requests into batch for own's
// leader, or none once a leader has taken own: own's answer is on its way,
// and its caller must not wait for a batch of others' acks.
func (g *commitGroup) take(own *commitRequest, batch []*commitRequest) []*commitRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	if own.taken {
		return batch[:0]
	}
	n := min(len(g.pending), maxCommitBatch)
	batch = append(batch[:0], g.pending[:n]...)
	for _, req := range batch {
		req.taken = true
	}
	rest := copy(g.pending, g.pending[n:])
	clear(g.pending[rest:])
	g.pending = g.pending[:rest]
	return batch
}

// release passes the lead to the oldest waiting request whose caller holds
// none, or lets it lapse.
func (g *commitGroup) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, req := range g.pending {
		if !req.hasLead {
			req.hasLead = true
			close(req.lead)
			return
		}
	}
	g.leading--
}

func (g *commitGroup) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// commit runs work in a transaction, possibly shared with other callers',
// and once it committed, updates the history cache with what it wrote and
// read and notes the timers it queued.
func (p *Provider) commit(ctx context.Context, work commitWork) error {
	err := p.commitShared(ctx, work)
	if err == nil {
		p.cacheCommitted(work)
		p.noteTimers(work)
	}
	return err
}

func (p *Provider) commitShared(ctx context.Context, work commitWork) error {
	req := &commitRequest{ctx: ctx, work: work, done: make(chan error, 1), lead: make(chan struct{})}
	return p.commits.run(req, p.sendCountedBatch)
}

// run queues req and returns its answer, leading batches (sent with send)
// when the group has fewer leaders than it may.
func (g *commitGroup) run(req *commitRequest, send func(batch []*commitRequest)) error {
	if g.add(req) {
		g.lead(req, send)
		return <-req.done
	}
	return g.follow(req, send)
}

// follow waits for queued req's answer, and leads if the lead is passed to it
// first. That lead ends at once if another leader has taken req meanwhile.
func (g *commitGroup) follow(req *commitRequest, send func(batch []*commitRequest)) error {
	answered, lead, err := g.wait(req)
	if !answered {
		g.lead(req, send)
		return <-req.done
	}
	if lead {
		g.release()
	}
	return err
}

// wait waits until req is answered or the lead is passed to it. The leader
// answers every request it took: its statements may be in a transaction that
// is about to commit. lead is also set when another leader answered req after
// the lead had been passed to it (req was still queued then): the caller
// must pass it on (release), or the lead would lapse for good.
func (g *commitGroup) wait(req *commitRequest) (answered, lead bool, err error) {
	select {
	case err = <-req.done:
		g.mu.Lock()
		defer g.mu.Unlock()
		return true, req.hasLead, err
	case <-req.lead:
		return false, true, nil
	}
}

// lead sends batches of the waiting requests until one of its batches or
// another leader's has taken own, then passes the lead on.
func (g *commitGroup) lead(own *commitRequest, send func(batch []*commitRequest)) {
	defer g.release()
	var batch []*commitRequest
	for {
		if batch = g.take(own, batch); len(batch) == 0 {
			return
		}
		send(batch)
		clear(batch)
	}
}

// sendCountedBatch sends batch and counts it, for tests.
func (p *Provider) sendCountedBatch(batch []*commitRequest) {
	p.sendCommitBatch(batch)
	p.commitBatches.Add(1)
}

// sendCommitBatch sends batch's requests in one transaction and answers each.
func (p *Provider) sendCommitBatch(batch []*commitRequest) {
	live := batch[:0:0]
	for _, req := range batch {
		if err := req.ctx.Err(); err != nil {
			req.done <- err
			continue
		}
		if err := claimedEarlier(req, live); err != nil {
			req.done <- err
			continue
		}
		live = append(live, req)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		live[0].done <- p.sendAlone(live[0])
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
			req.done <- nil
		}
	case errors.As(err, &pgErr):
		// A statement failed: the server rolled the whole batch back.
		if stale := staleClaimants(pgErr, live, calls.claims); stale != nil {
			p.sendCommitBatch(slices.DeleteFunc(live, func(r *commitRequest) bool {
				if err, ok := stale[r]; ok {
					r.done <- err
					return true
				}
				return false
			}))
			return
		}
		for _, req := range live {
			req.done <- p.sendAlone(req)
		}
	default:
		// The connection failed: whether the batch committed is unknown,
		// as it would be for a single ack.
		for _, req := range live {
			req.done <- err
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
		i := slices.IndexFunc(reqs, func(r *commitRequest) bool { return r.work.claim == claims[k-1] })
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
	br := p.pool.SendBatch(req.ctx, b)
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
		if w := req.work.workAck; w != nil {
			calls.workAcks = append(calls.workAcks, w)
		}
		if c := req.work.claim; c != nil {
			calls.claims = append(calls.claims, c)
		}
		if a := req.work.ack; a != nil {
			calls.acks = append(calls.acks, a)
		}
		if f := req.work.fetch; f != nil {
			calls.fetches = append(calls.fetches, f)
		}
		calls.fetches = append(calls.fetches, req.work.dueTimers...)
	}
	if len(calls.workAcks) > 0 {
		queueWorkAcks(b, calls.workAcks)
		calls.quietChecks = queueQuietChecks(b, calls.workAcks)
	}
	if len(calls.claims) > 0 {
		queueCachedClaims(b, calls.claims)
	}
	for _, req := range reqs {
		if req.work.before.queue != nil {
			req.work.before.queue(b)
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
		if req.work.before.read != nil {
			if err := req.work.before.read(br); err != nil {
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
