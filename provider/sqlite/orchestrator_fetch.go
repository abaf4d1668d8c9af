package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/storeengine"
	"github.com/duroxide/duroxide-go/provider/sqlite/internal/dbsqlc"
)

// LockReady implements storeengine.Driver. Unless instances are named, a
// read on any connection first says whether any turn is ready, so idle
// pollers take no write lock. The histories are read after the commit
// that locked the turns (loadHistories).
func (d driver) LockReady(ctx context.Context, r storeengine.ReadyParams) (storeengine.Ready, error) {
	const op = "fetch orchestration items"
	p := d.p
	if len(r.Named) == 0 && !p.orchestrationReady(ctx, capabilityOf(r.Capability)) {
		return storeengine.Ready{NextDue: p.nextDue(ctx)}, nil
	}
	items, err := p.lockReadyInstances(ctx, op, r)
	if err == nil {
		err = p.loadHistories(ctx, op, items...)
	}
	switch {
	case err != nil:
		return storeengine.Ready{}, err
	case len(items) == 0:
		return storeengine.Ready{NextDue: p.nextDue(ctx)}, nil
	}
	return storeengine.Ready{Items: items}, nil
}

// capabilityFilter is a provider.Capability as the queries take it: its
// keys and names as JSON arrays, both NULL for no filter.
type capabilityFilter struct{ keys, names sql.NullString }

func capabilityOf(c *provider.Capability) capabilityFilter {
	if c == nil {
		return capabilityFilter{}
	}
	keys, names := c.Keys()
	return capabilityFilter{keys: jsonArray(keys), names: jsonArray(names)}
}

func jsonArray(s []string) sql.NullString {
	b, _ := json.Marshal(nonNilStrings(s)) // strings always encode
	return sql.NullString{String: string(b), Valid: true}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// nextDue is when the earliest delayed orchestrator message (a timer) becomes
// visible; zero when there is none or the store cannot say.
func (p *Provider) nextDue(ctx context.Context) time.Time {
	due, err := queries.OrchestratorNextDue(ctx, p.stmts, nowMs())
	if err != nil || due == 0 {
		return time.Time{}
	}
	return time.UnixMilli(due)
}

// lockReadyInstances locks up to r.Max ready instances' turns in one write
// transaction. The instances r names, whose timers fell due, are tried by
// name (their histories are mostly cached); the scan for ready work fills
// the rest, leaving out r.Exclude, and finds a timer not taken that way
// (another process took its turn).
func (p *Provider) lockReadyInstances(ctx context.Context, op string, r storeengine.ReadyParams) ([]*provider.OrchestrationItem, error) {
	var items []*provider.OrchestrationItem
	max, lockTimeout, due := r.Max, r.LockFor, r.Named
	if max < 1 {
		return nil, nil
	}
	exclude, err := json.Marshal(r.Exclude)
	if err != nil {
		return nil, fmt.Errorf("list cached turns in flight: %w", err)
	}
	caps := capabilityOf(r.Capability)
	err = p.writeTx(ctx, op, func(tx *txn) error {
		items = items[:0]
		now := nowMs()
		for _, id := range due {
			item, err := lockIfVisible(ctx, tx, id, now, now+lockTimeout.Milliseconds())
			if err != nil {
				return err
			}
			if item != nil {
				items = append(items, item)
			}
		}
		if len(items) == max {
			return nil
		}
		ids, err := readyInstances(ctx, tx, now, max-len(items), string(exclude), caps)
		if err != nil {
			return err
		}
		for _, id := range ids {
			item, err := lockInstance(ctx, tx, id, now, now+lockTimeout.Milliseconds())
			if err != nil {
				return err
			}
			if item != nil {
				items = append(items, item)
			}
		}
		return nil
	})
	return items, err
}

// readyInstancesQuery walks the visible messages in the order they became
// visible, on the (visible_at, id) index, and stops at its limit: sleeping
// timers are never read and the visible backlog is not sorted (in id order
// SQLite sorted every visible message first).
const readyInstancesQuery = `
		SELECT q.instance_id
		FROM orchestrator_queue q LEFT JOIN instances i ON i.instance_id = q.instance_id
		WHERE q.visible_at <= ? AND NOT EXISTS (
			SELECT 1 FROM instance_locks l WHERE l.instance_id = q.instance_id AND l.locked_until > ?)
		  AND q.instance_id NOT IN (SELECT value FROM json_each(?))
		  AND (? IS NULL
		       OR (i.instance_id IS NOT NULL AND (i.orchestration_name || char(31) || i.orchestration_version IN (SELECT value FROM json_each(?))
		                                          OR (i.orchestration_version = '' AND i.orchestration_name IN (SELECT value FROM json_each(?)))))
		       OR (i.instance_id IS NULL AND NOT EXISTS (
		           SELECT 1 FROM orchestrator_queue s WHERE s.instance_id = q.instance_id AND s.start_name IS NOT NULL
		             AND NOT (s.start_name || char(31) || s.start_version IN (SELECT value FROM json_each(?))
		                      OR (s.start_version = '' AND s.start_name IN (SELECT value FROM json_each(?)))))))
		ORDER BY q.visible_at, q.id
		LIMIT ?`

// readyInstances lists instances with visible messages and no live lock, in
// the order their first message became visible. It stops reading at max
// instances (or after a bounded number of messages of the same few
// instances), rather than grouping the whole backlog: it stays hand-written,
// as a generated query reads every row into a slice first. It leaves out the
// instances in exclude (a JSON array): cached timer turns in flight, and
// timers about to fall due.
func readyInstances(ctx context.Context, tx *txn, now int64, max int, exclude string, caps capabilityFilter) ([]string, error) {
	rows, err := tx.QueryContext(ctx, readyInstancesQuery, now, now, exclude, caps.keys, caps.keys, caps.names, caps.keys, caps.names, max*16)
	if err != nil {
		return nil, fmt.Errorf("find ready instances: %w", err)
	}
	defer rows.Close()
	var ids []string
	seen := make(map[string]bool, max)
	for len(ids) < max && rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("find ready instances: %w", err)
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}

// lockIfVisible locks the instance's turn when it has a visible message and
// no live lock; nil otherwise.
func lockIfVisible(ctx context.Context, tx *txn, instance string, now, lockedUntil int64) (*provider.OrchestrationItem, error) {
	visible, err := queries.InstanceHasVisible(ctx, tx, dbsqlc.InstanceHasVisibleParams{InstanceID: instance, Now: now})
	if err != nil || !visible {
		return nil, err
	}
	return lockInstance(ctx, tx, instance, now, lockedUntil)
}

// lockInstance takes the instance lock, tags the visible messages with the new
// token and loads the turn but its history (loadHistories reads that after
// the commit). It returns nil when the lock is held by someone else.
func lockInstance(ctx context.Context, tx *txn, instance string, now, lockedUntil int64) (*provider.OrchestrationItem, error) {
	token := newToken()
	if took, err := takeInstanceLock(ctx, tx, instance, token, now, lockedUntil); err != nil || !took {
		return nil, err
	}
	if err := queries.OrchestratorTagVisible(ctx, tx, dbsqlc.OrchestratorTagVisibleParams{LockToken: token, InstanceID: instance, Now: now}); err != nil {
		return nil, fmt.Errorf("tag messages of %q: %w", instance, err)
	}
	item := &provider.OrchestrationItem{Instance: instance, LockToken: token, ExecutionID: 1}
	if err := loadMessages(ctx, tx, item); err != nil {
		return nil, err
	}
	if err := loadInstance(ctx, tx, item); err != nil {
		return nil, err
	}
	return item, nil
}

// takeInstanceLock writes the instance's lock row under token unless a live
// lock holds it, and reports whether it did.
func takeInstanceLock(ctx context.Context, tx *txn, instance, token string, now, lockedUntil int64) (bool, error) {
	n, err := queries.InstanceLockTake(ctx, tx, dbsqlc.InstanceLockTakeParams{InstanceID: instance, LockToken: token,
		LockedUntil: lockedUntil, LockedAt: now})
	if err != nil {
		return false, fmt.Errorf("lock instance %q: %w", instance, err)
	}
	return n > 0, nil
}

func loadMessages(ctx context.Context, tx *txn, item *provider.OrchestrationItem) error {
	rows, err := queries.OrchestratorTagged(ctx, tx, item.LockToken)
	if err != nil {
		return fmt.Errorf("read messages of %q: %w", item.Instance, err)
	}
	for _, row := range rows {
		item.AttemptCount = max(item.AttemptCount, int(row.AttemptCount))
		w, err := provider.DecodeWorkItem(row.WorkItem)
		if err != nil {
			item.DecodeError = errors.Join(item.DecodeError, &provider.CorruptDataError{
				Instance: item.Instance, What: fmt.Sprintf("orchestrator message %d", row.ID), Err: err})
			continue
		}
		item.Messages = append(item.Messages, w)
	}
	return nil
}

// loadInstance fills in the instance's stored metadata or, for an instance whose
// first turn has not been acked, what its StartOrchestration message says.
func loadInstance(ctx context.Context, tx *txn, item *provider.OrchestrationItem) error {
	row, err := queries.InstanceForTurn(ctx, tx, item.Instance)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		for _, m := range item.Messages {
			if m.Kind == provider.WorkStartOrchestration {
				item.OrchestrationName, item.Version, item.ParentInstance = m.Name, m.Version, m.ParentInstance
				break
			}
		}
		return nil
	case err != nil:
		return fmt.Errorf("read instance %q: %w", item.Instance, err)
	}
	item.Exists = true
	item.OrchestrationName, item.Version, item.ExecutionID = row.OrchestrationName, row.OrchestrationVersion, row.CurrentExecutionID
	item.ParentInstance, item.CustomStatusVersion = row.ParentInstanceID.String, row.CustomStatusVersion
	item.Status = provider.ExecutionStatus(row.Status.String)
	if row.CustomStatus.Valid {
		item.CustomStatus = &row.CustomStatus.String
	}
	return nil
}

// loadHistories reads the history of each locked item, after the commit that
// locked them: the write lock is not held while it is read and decoded, and
// only the lock holder (this caller) appends to an instance's history. When
// a read fails, the items are handed back, no attempt counted, so they need
// not wait for their locks to expire.
func (p *Provider) loadHistories(ctx context.Context, op string, items ...*provider.OrchestrationItem) error {
	for _, item := range items {
		if item == nil {
			continue
		}
		p.eng.TimersTaken(item)
		if !item.Exists {
			continue
		}
		events, decodeErr, err := p.turnHistory(ctx, item.Instance, item.ExecutionID)
		if err != nil {
			p.handBack(ctx, items)
			return classify(op, item.Instance, err)
		}
		item.History = events
		item.DecodeError = errors.Join(item.DecodeError, decodeErr)
	}
	return nil
}

func (p *Provider) handBack(ctx context.Context, items []*provider.OrchestrationItem) {
	ctx = context.WithoutCancel(ctx)
	for _, item := range items {
		if item != nil {
			_ = p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true})
		}
	}
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readHistory loads one execution's history. Events that cannot be decoded are
// skipped and reported in decodeErr, naming the instance and event.
func readHistory(ctx context.Context, q querier, instance string, executionID int64) (events []provider.Event, decodeErr error, err error) {
	read, err := readHistoryFrom(ctx, q, instance, executionID, resumeAt{})
	return read.events, read.decodeErr, err
}

// resumeAt is a cached history's last event (its ID and stored form) and
// the instance incarnation it was read from. The zero value reads from the
// start.
type resumeAt struct {
	event       int64
	data        string
	incarnation int64
}

// errHistoryMoved: the store no longer holds a cached history's last event as
// it was cached, or the instance is another incarnation (deleted and started
// again).
var errHistoryMoved = errors.New("history no longer continues the cached events")

// historyRead is what one statement read of an execution's history, so its
// parts agree: the events after the resume point (undecodable ones left out
// and reported in decodeErr), the instance's incarnation, the stored form of
// the last event, and the instance's custom status as of that event.
type historyRead struct {
	events      []provider.Event
	incarnation int64
	last        string
	custom      *string
	decodeErr   error
}

// readHistoryQuery reads the custom status on the last event's row alone:
// the other rows would only copy it. It stays hand-written: readHistoryFrom
// decodes each row as it reads it and stops at the first that does not
// continue the cached events, where a generated query reads every row into
// a slice first.
const readHistoryQuery = `
		SELECT h.event_id, h.event_data, i.incarnation,
		       CASE WHEN h.event_id = (SELECT max(event_id) FROM history WHERE instance_id = ?1 AND execution_id = ?2)
		            THEN i.custom_status END
		FROM history h JOIN instances i ON i.instance_id = h.instance_id
		WHERE h.instance_id = ?1 AND h.execution_id = ?2 AND h.event_id >= ?3 ORDER BY h.event_id`

// readHistoryFrom loads the events of one execution after from.event, which
// must be stored as from.data in incarnation from.incarnation of the
// instance (errHistoryMoved otherwise).
func readHistoryFrom(ctx context.Context, q querier, instance string, executionID int64, from resumeAt) (historyRead, error) {
	var read historyRead
	rows, err := q.QueryContext(ctx, readHistoryQuery, instance, executionID, from.event)
	if err != nil {
		return historyRead{}, fmt.Errorf("read history of %q: %w", instance, err)
	}
	defer rows.Close()
	checked := from.event == 0
	for rows.Next() {
		var id int64
		var data string
		var custom sql.NullString
		if err := rows.Scan(&id, &data, &read.incarnation, &custom); err != nil {
			return historyRead{}, fmt.Errorf("read history of %q: %w", instance, err)
		}
		read.custom = nil
		if custom.Valid {
			read.custom = &custom.String
		}
		if !checked {
			if id != from.event || data != from.data || read.incarnation != from.incarnation {
				return historyRead{}, errHistoryMoved
			}
			checked = true
			continue
		}
		read.last = data
		e, err := provider.DecodeEvent(data)
		if err != nil {
			read.decodeErr = errors.Join(read.decodeErr, &provider.CorruptDataError{
				Instance: instance, What: fmt.Sprintf("history event %d of execution %d", id, executionID), Err: err})
			continue
		}
		read.events = append(read.events, e)
	}
	if err := rows.Err(); err != nil {
		return historyRead{}, fmt.Errorf("read history of %q: %w", instance, err)
	}
	if !checked {
		return historyRead{}, errHistoryMoved
	}
	return read, nil
}

// LockInstance implements storeengine.Driver.
func (d driver) LockInstance(ctx context.Context, instance string, lockTimeout time.Duration) (*provider.OrchestrationItem, error) {
	const op = "fetch instance item"
	p := d.p
	var item *provider.OrchestrationItem
	err := p.writeTx(ctx, op, func(tx *txn) error {
		now := nowMs()
		var err error
		item, err = lockIfVisible(ctx, tx, instance, now, now+lockTimeout.Milliseconds())
		return err
	})
	if err == nil {
		err = p.loadHistories(ctx, op, item)
	}
	return item, err
}
