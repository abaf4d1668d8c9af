package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/fetch"
	"github.com/duroxide/duroxide-go/provider/internal/histcache"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
	"github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"
)

// Fetch implements provider.Provider.
func (p *Provider) Fetch(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	return fetch.Route(ctx, req, p.lookups)
}

// fetchOrchestration long-polls for ready turns (a request fetch.Route
// validated). With cached, the turns of
// timers this provider queued and that fell due are built from the history
// cache where it can (FetchRequest.FromCache), without a round trip.
func (p *Provider) fetchOrchestration(ctx context.Context, max int, lockTimeout, pollTimeout time.Duration, cached bool) ([]*provider.OrchestrationItem, error) {
	const op = "fetch orchestration items"
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	var items []*provider.OrchestrationItem
	err := wake.Poll(ctx, pollTimeout, p.opts.PollInterval, p.orchestratorWork, p.timersDue, p.closed, func() (bool, time.Time, error) {
		var err error
		var nextDue time.Time
		items, nextDue, err = p.lockReadyInstances(ctx, max, lockTimeout, cached)
		return len(items) > 0, nextDue, classify(op, "", err)
	})
	return items, err
}

// lockReadyInstances calls the fetch function. When nothing is ready it
// returns, in the same round trip, when the next delayed message is due.
//
// Instances whose timers, queued by this provider's acks, fell due are
// built from the history cache (with cached) or asked for by name
// (fetchDue): that skips the look for ready work and reads only the history
// the cache lacks, so timers fire about as cheaply as turns continue. The
// look for ready work runs instead whenever work was announced since the
// last look, or a poll interval passed (wake.ScanGate), so timers never
// starve other work, and whenever no timer of this provider is due; it also
// finds a timer not taken by name (another process took its turn, or the
// store's clock is behind). It leaves out the instances of this provider's
// cached timer turns in flight and of its timers about to fall due
// (wake.Due.Upcoming): taking one would make a turn stale.
func (p *Provider) lockReadyInstances(ctx context.Context, max int, lockTimeout time.Duration, cached bool) ([]*provider.OrchestrationItem, time.Time, error) {
	owed, now := p.scanGate.Owed(), time.Now()
	if !owed {
		turns, byName := p.hist.DueTurns(p.timersDue.ReadyTimers(now, max), cached, &p.inFlight)
		var items []*provider.OrchestrationItem
		var err error
		if len(byName) > 0 {
			if items, err = p.fetchDue(ctx, byName, lockTimeout); err != nil && len(turns) > 0 {
				err = nil // the timers not taken are found by a look for ready work
			}
		}
		if items = append(turns, items...); err != nil || len(items) > 0 {
			return items, time.Time{}, err
		}
	}
	rows, err := p.pool.Query(ctx, `SELECT * FROM dx_fetch_orchestration_items($1, $2, $3)`, max, lockTimeout.Milliseconds(),
		append(p.inFlight.List(), p.timersDue.Upcoming(now, owed)...))
	if err != nil {
		return nil, time.Time{}, err
	}
	items, nextDue, err := p.readTurns(rows, nil, nil)
	if err == nil && len(items) == 0 {
		nextDue = p.timersDue.Earlier(nextDue)
	}
	return items, nextDue, err
}

// readTurns reads the rows of a fetch that committed on its own: the turns,
// each completed with what the cache held of its instance (known, aligned
// with named), and the next due time. The turns' histories go to the cache.
func (p *Provider) readTurns(rows pgx.Rows, named []string, known []knownHistory) ([]*provider.OrchestrationItem, time.Time, error) {
	defer rows.Close()
	var items []*provider.OrchestrationItem
	var incarnations []int64
	var nextDue time.Time
	for rows.Next() {
		item, meta, err := scanOrchestrationItem(rows)
		if err != nil {
			return nil, time.Time{}, err
		}
		if item == nil {
			nextDue = meta.nextDue
			continue
		}
		if k := slices.Index(named, item.Instance); k >= 0 {
			known[k].complete(item, meta.historyAfter)
		}
		items = append(items, item)
		incarnations = append(incarnations, meta.incarnation)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, err
	}
	for i, item := range items {
		p.cacheFetched(item, incarnations[i])
	}
	return items, nextDue, nil
}

// fetchMeta is what a fetch's row says besides the item: the next due time
// (on the marker row of an empty fetch), the instance's incarnation, and the
// event after which the history starts (0: it is whole).
type fetchMeta struct {
	nextDue      time.Time
	incarnation  int64
	historyAfter int64
}

// scanOrchestrationItem reads one row of dx_fetch_orchestration_items. The
// marker row of an empty fetch has no instance; it carries the next due time.
func scanOrchestrationItem(rows pgx.Rows) (*provider.OrchestrationItem, fetchMeta, error) {
	var instance, token, name, version, status, parent, custom *string
	var exists *bool
	var execution, customVersion, nextDueMs, incarnation, historyAfter *int64
	var attempts *int
	var messageIDs, eventIDs []int64
	var messages, events []string
	var meta fetchMeta
	if err := rows.Scan(&instance, &token, &exists, &name, &version, &execution, &status, &parent, &custom,
		&customVersion, &attempts, &messageIDs, &messages, &eventIDs, &events, &nextDueMs, &incarnation, &historyAfter); err != nil {
		return nil, meta, fmt.Errorf("read fetched item: %w", err)
	}
	if instance == nil {
		if nextDueMs != nil {
			meta.nextDue = time.UnixMilli(*nextDueMs)
		}
		return nil, meta, nil
	}
	meta.incarnation, meta.historyAfter = deref(incarnation), deref(historyAfter)
	item := &provider.OrchestrationItem{Instance: *instance, LockToken: deref(token), Exists: *exists,
		OrchestrationName: deref(name), Version: deref(version), ExecutionID: *execution,
		CustomStatusVersion: *customVersion, AttemptCount: *attempts}
	if status != nil {
		item.Status = provider.ExecutionStatus(*status)
	}
	if parent != nil {
		item.ParentInstance = *parent
	}
	item.CustomStatus = custom
	for i, data := range messages {
		w, err := provider.DecodeWorkItem(data)
		if err != nil {
			item.DecodeError = errors.Join(item.DecodeError, &provider.CorruptDataError{
				Instance: item.Instance, What: fmt.Sprintf("orchestrator message %d", messageIDs[i]), Err: err})
			continue
		}
		item.Messages = append(item.Messages, w)
	}
	if !item.Exists {
		for _, m := range item.Messages {
			if m.Kind == provider.WorkStartOrchestration {
				item.OrchestrationName, item.Version, item.ParentInstance = m.Name, m.Version, m.ParentInstance
				break
			}
		}
	}
	item.History, item.DecodeError = decodeEvents(item.Instance, item.ExecutionID, eventIDs, events, item.DecodeError)
	return item, meta, nil
}

// decodeEvents decodes stored events; undecodable ones are skipped and
// reported, naming the instance and the event.
func decodeEvents(instance string, executionID int64, ids []int64, data []string, decodeErr error) ([]provider.Event, error) {
	events := make([]provider.Event, 0, len(data))
	for i, d := range data {
		e, err := provider.DecodeEvent(d)
		if err != nil {
			decodeErr = errors.Join(decodeErr, &provider.CorruptDataError{
				Instance: instance, What: fmt.Sprintf("history event %d of execution %d", ids[i], executionID), Err: err})
			continue
		}
		events = append(events, e)
	}
	return events, decodeErr
}

// Turn commits a locked turn: in one call of
// dx_ack_orchestration_items, shared with the acks of its commit batch.
func (ps paths) Turn(ctx context.Context, lockToken string, ack provider.OrchestrationAck) error {
	p := ps.p
	const op = "ack orchestration item"
	if lockToken == "" {
		return encode.LockNotHeld(op, "", "empty lock token")
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return err
	}
	if err := p.checkOpen(op); err != nil {
		return err
	}
	turn := &turnAck{token: lockToken, enc: enc, incarnation: histcache.NewIncarnation()}
	if err := p.commit(ctx, commitWork{ack: turn}); err != nil {
		return classify(op, "", err)
	}
	p.announceAck(turn.res, len(enc.WorkerItems) > 0)
	return nil
}

func (p *Provider) announceAck(res ackResult, workerItems bool) {
	if res.orchestratorPending {
		p.announce(orchestratorChannel)
	}
	if workerItems {
		p.announce(workerChannel)
	}
	if res.statusChanged {
		p.announceStatus(res.change)
	}
}

// AbandonOrchestrationItem implements provider.Provider.
func (p *Provider) AbandonOrchestrationItem(ctx context.Context, req provider.AbandonRequest) error {
	lockToken, delay, ignoreAttempt, cause := req.LockToken, req.Delay, req.IgnoreAttempt, req.Cause
	const op = "abandon orchestration item"
	if lockToken == "" {
		return encode.LockNotHeld(op, "", "empty lock token")
	}
	if delay < 0 {
		return encode.Invalid(op, "", "delay must not be negative, got %v", delay)
	}
	lastError, err := encode.Cause(op, cause)
	if err != nil {
		return err
	}
	err = queries.OrchestratorItemAbandon(ctx, p.pool, dbsqlc.OrchestratorItemAbandonParams{LockToken: lockToken,
		DelayMs: delay.Milliseconds(), IgnoreAttempt: ignoreAttempt, LastError: lastError})
	if err == nil && delay == 0 {
		p.announce(orchestratorChannel)
	}
	return classify(op, "", err)
}

// RenewOrchestrationItemLock implements provider.Provider.
func (p *Provider) RenewOrchestrationItemLock(ctx context.Context, req provider.RenewRequest) error {
	lockToken, extendFor := req.LockToken, req.ExtendFor
	const op = "renew orchestration lock"
	if extendFor <= 0 {
		return encode.Invalid(op, "", "extension must be positive, got %v", extendFor)
	}
	err := queries.OrchestratorLockRenew(ctx, p.pool, dbsqlc.OrchestratorLockRenewParams{LockToken: lockToken, ExtendMs: extendFor.Milliseconds()})
	return classify(op, "", err)
}

func (p *Provider) checkOpen(op string) error {
	select {
	case <-p.closed:
		return provider.Permanent(op, "", provider.ErrClosed)
	default:
		return nil
	}
}

// fetchInstanceItem is Fetch of a named instance.
func (p *Provider) fetchInstanceItem(ctx context.Context, instance string, lockTimeout time.Duration) (*provider.OrchestrationItem, error) {
	const op = "fetch instance item"
	if err := p.checkOpen(op); err != nil {
		return nil, err
	}
	p.inFlight.Done(instance) // a stale cached timer turn falls back to this
	items, err := p.fetchNamed(ctx, []string{instance}, lockTimeout)
	if err != nil || len(items) == 0 {
		return nil, classify(op, instance, err)
	}
	return items[0], nil
}

// fetchDue locks the turns of instances whose timers fell due, through the
// commit group: the fetches share a batch, and its call of the fetch
// function, with the acks and continuations in flight.
func (p *Provider) fetchDue(ctx context.Context, instances []string, lockTimeout time.Duration) ([]*provider.OrchestrationItem, error) {
	fetches := make([]*instanceFetch, len(instances))
	for i, instance := range instances {
		fetches[i] = &instanceFetch{instance: instance, lockTimeout: lockTimeout}
	}
	if err := p.commit(ctx, commitWork{dueTimers: fetches}); err != nil {
		return nil, err
	}
	var items []*provider.OrchestrationItem
	for _, f := range fetches {
		if f.item != nil {
			items = append(items, f.item)
		}
	}
	return items, nil
}

// fetchNamed locks the turns of the named instances that have one, sending
// what the history cache holds of them, in one call of its own.
func (p *Provider) fetchNamed(ctx context.Context, instances []string, lockTimeout time.Duration) ([]*provider.OrchestrationItem, error) {
	known := make([]knownHistory, len(instances))
	args := newKnownArgs(len(instances))
	lockMs := make([]int64, len(instances))
	for i, instance := range instances {
		known[i] = p.knownHistory(instance)
		args.set(i, known[i])
		lockMs[i] = lockTimeout.Milliseconds()
	}
	rows, err := p.pool.Query(ctx, fetchInstanceQuery, instances, lockMs, len(instances),
		args.incarnations, args.executions, args.events)
	if err != nil {
		return nil, err
	}
	items, _, err := p.readTurns(rows, instances, known)
	return items, err
}
