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
	"github.com/duroxide/duroxide-go/provider/internal/histcache"
	"github.com/duroxide/duroxide-go/provider/internal/storeengine"
	"github.com/duroxide/duroxide-go/provider/postgres/internal/dbsqlc"
)

// LockReady implements storeengine.Driver: the named instances' turns
// first, through the commit group (fetchDue); when they gave none, a call
// of the fetch function, which returns in the same round trip when the
// next delayed message is due when nothing is ready.
func (d driver) LockReady(ctx context.Context, r storeengine.ReadyParams) (storeengine.Ready, error) {
	const op = "fetch orchestration items"
	p := d.p
	if len(r.Named) > 0 {
		items, err := p.fetchDue(ctx, r.Named, r.LockFor)
		if err != nil || len(items) > 0 {
			return storeengine.Ready{Items: items}, classify(op, "", err)
		}
	}
	var keys, names []string // NULL: no capability filter
	if r.Capability != nil {
		keys, names = r.Capability.Keys()
		keys, names = nonNil(keys), nonNil(names)
	}
	rows, err := p.pool.Query(ctx, `SELECT * FROM dx_fetch_orchestration_items($1, $2, $3, $4, $5)`, r.Max, r.LockFor.Milliseconds(), r.Exclude,
		keys, names)
	if err != nil {
		return storeengine.Ready{}, classify(op, "", err)
	}
	items, nextDue, err := p.readTurns(rows, nil, nil)
	return storeengine.Ready{Items: items, NextDue: nextDue}, classify(op, "", err)
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
		p.eng.Fetched(item, incarnations[i])
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

// fetchedRow is a row of dx_fetch_orchestration_items and
// dx_fetch_instance_items, read by column name. The marker row of an empty
// fetch has no instance; it carries the next due time.
type fetchedRow struct {
	InstanceID           *string  `db:"instance_id"`
	LockToken            *string  `db:"lock_token"`
	ItemExists           *bool    `db:"item_exists"`
	OrchestrationName    *string  `db:"orchestration_name"`
	OrchestrationVersion *string  `db:"orchestration_version"`
	ExecutionID          *int64   `db:"execution_id"`
	Status               *string  `db:"status"`
	ParentInstanceID     *string  `db:"parent_instance_id"`
	CustomStatus         *string  `db:"custom_status"`
	CustomStatusVersion  *int64   `db:"custom_status_version"`
	AttemptCount         *int     `db:"attempt_count"`
	MessageIDs           []int64  `db:"message_ids"`
	Messages             []string `db:"messages"`
	EventIDs             []int64  `db:"event_ids"`
	Events               []string `db:"events"`
	NextVisibleMs        *int64   `db:"next_visible_ms"`
	Incarnation          *int64   `db:"incarnation"`
	HistoryAfter         *int64   `db:"history_after"`
}

// scanOrchestrationItem reads one fetchedRow: the turn, or nil for the
// marker row.
func scanOrchestrationItem(rows pgx.Rows) (*provider.OrchestrationItem, fetchMeta, error) {
	var meta fetchMeta
	r, err := pgx.RowToStructByName[fetchedRow](rows)
	if err != nil {
		return nil, meta, fmt.Errorf("read fetched item: %w", err)
	}
	if r.InstanceID == nil {
		if r.NextVisibleMs != nil {
			meta.nextDue = time.UnixMilli(*r.NextVisibleMs)
		}
		return nil, meta, nil
	}
	meta.incarnation, meta.historyAfter = deref(r.Incarnation), deref(r.HistoryAfter)
	item := &provider.OrchestrationItem{Instance: *r.InstanceID, LockToken: deref(r.LockToken), Exists: *r.ItemExists,
		OrchestrationName: deref(r.OrchestrationName), Version: deref(r.OrchestrationVersion), ExecutionID: *r.ExecutionID,
		CustomStatusVersion: *r.CustomStatusVersion, AttemptCount: *r.AttemptCount,
		Status: provider.ExecutionStatus(deref(r.Status)), ParentInstance: deref(r.ParentInstanceID), CustomStatus: r.CustomStatus}
	for i, data := range r.Messages {
		w, err := provider.DecodeWorkItem(data)
		if err != nil {
			item.DecodeError = errors.Join(item.DecodeError, &provider.CorruptDataError{
				Instance: item.Instance, What: fmt.Sprintf("orchestrator message %d", r.MessageIDs[i]), Err: err})
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
	item.History, item.DecodeError = decodeEvents(item.Instance, item.ExecutionID, r.EventIDs, r.Events, item.DecodeError)
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
func (d driver) Turn(ctx context.Context, t provider.TurnCommit) error {
	p, lockToken, ack := d.p, t.LockToken, t.Ack
	const op = "ack orchestration item"
	if lockToken == "" {
		return encode.LockNotHeld(op, "", "empty lock token")
	}
	enc, err := encode.EncodeAck(op, ack)
	if err != nil {
		return err
	}
	if err := p.eng.CheckOpen(op); err != nil {
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

// AbandonTurn implements storeengine.Driver.
func (d driver) AbandonTurn(ctx context.Context, a storeengine.AbandonParams) error {
	p := d.p
	err := queries.OrchestratorItemAbandon(ctx, p.pool, dbsqlc.OrchestratorItemAbandonParams{LockToken: a.LockToken,
		DelayMs: a.Delay.Milliseconds(), IgnoreAttempt: a.IgnoreAttempt, LastError: a.LastError})
	if err == nil && a.Delay == 0 {
		p.announce(orchestratorChannel)
	}
	return classify("abandon orchestration item", "", err)
}

// RenewTurn implements storeengine.Driver.
func (d driver) RenewTurn(ctx context.Context, req provider.RenewRequest) error {
	err := queries.OrchestratorLockRenew(ctx, d.p.pool, dbsqlc.OrchestratorLockRenewParams{LockToken: req.LockToken, ExtendMs: req.ExtendFor.Milliseconds()})
	return classify("renew orchestration lock", "", err)
}

// LockInstance implements storeengine.Driver.
func (d driver) LockInstance(ctx context.Context, instance string, lockTimeout time.Duration) (*provider.OrchestrationItem, error) {
	const op = "fetch instance item"
	p := d.p
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
