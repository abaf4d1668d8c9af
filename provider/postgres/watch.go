package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
)

// Watch implements provider.Provider. A status change is reported as soon as
// it is announced (status_feed.go): by this process's ack at once, by another
// process's in its NOTIFY, which carries the change. As a safety net for
// announcements that never came, every status change also stamps the
// instance row with its transaction ID. The watcher keeps a watermark at the oldest
// transaction still running (the snapshot's xmin) and reads the rows stamped
// between its last watermark and the current one: those transactions have all
// finished, so a change whose transaction commits late is read late, not lost.
// Changes already visible when Watch was called are left out, by testing
// against the snapshot taken then. An announcement naming an instance only
// wakes the watcher to read it; the scan runs at most once per PollInterval,
// not after every announcement (under load that doubled each report's reads).
func (p *Provider) Watch(ctx context.Context) (<-chan provider.StatusChange, error) {
	const op = "watch"
	if err := p.eng.CheckOpen(op); err != nil {
		return nil, err
	}
	snapshot, err := queries.WatchSnapshot(ctx, p.pool)
	start, watermark := snapshot.Snapshot, snapshot.Xmin
	if err != nil {
		return nil, classify(op, "", err)
	}
	snap, err := parseSnapshot(start)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	out := make(chan provider.StatusChange, 64)
	sub := p.feed.subscribe()
	go p.watchLoop(ctx, start, snap, watermark, sub, out)
	return out, nil
}

func (p *Provider) watchLoop(ctx context.Context, start string, snap pgSnapshot, watermark int64, sub *statusSub, out chan<- provider.StatusChange) {
	defer close(out)
	defer p.feed.unsubscribe(sub)
	// reported holds the seq last reported from an announcement, so the
	// scan does not report the same change again when it gets there.
	reported := map[string]int64{}
	// target is the xmax of the first scan after a quiet period: every
	// change announced so far was made by a transaction below it. Until the
	// watermark passes it (transactions elsewhere in the cluster may hold xmin
	// back), the scan is repeated on a short backoff instead of waiting a
	// whole PollInterval.
	var target int64
	retry := retryMin
	var nextScan time.Time
	for {
		woken := p.eng.StatusChanged.C()
		ids, announced := sub.take()
		for _, a := range announced {
			if a.Xid < watermark || snap.sees(a.Xid) {
				continue // the scan has read it, or it was there before Watch
			}
			if reported[a.Instance] >= a.Seq {
				continue
			}
			reported[a.Instance] = a.Seq
			if !wake.Send(ctx, out, a.statusChange(), p.closed) {
				return
			}
		}
		if len(ids) > 0 {
			announced, err := p.announcedChanges(ctx, start, watermark, ids)
			if err != nil {
				sub.putBack(ids)
			}
			for _, c := range announced {
				if reported[c.Instance] >= c.Seq {
					continue
				}
				reported[c.Instance] = c.Seq
				if !wake.Send(ctx, out, c, p.closed) {
					return
				}
			}
		}
		if wait := time.Until(nextScan); wait > 0 {
			// Woken by an announcement, read above: the scan keeps its pace.
			if !wake.Sleep(ctx, woken, wait, p.closed) {
				return
			}
			continue
		}
		changes, xmin, xmax, err := p.changesSince(ctx, start, watermark)
		if err == nil { // on error the same window is read again next time
			for _, c := range changes {
				if seq, ok := reported[c.Instance]; ok && seq >= c.Seq {
					if seq == c.Seq {
						delete(reported, c.Instance) // the scan caught up
					}
					continue // reported when announced
				}
				delete(reported, c.Instance)
				if !wake.Send(ctx, out, c, p.closed) {
					return
				}
			}
			watermark = xmin
			if target == 0 {
				target = xmax
			}
		}
		wait := p.opts.PollInterval
		if watermark < target {
			wait, retry = min(retry, wait), min(retry*2, retryMax)
		} else {
			target, retry = 0, retryMin
		}
		nextScan = time.Now().Add(wait)
		if !wake.Sleep(ctx, woken, wait, p.closed) {
			return
		}
	}
}

const (
	retryMin = 5 * time.Millisecond
	retryMax = 200 * time.Millisecond
)

// announcedChanges reads the current state of announced instances, leaving
// out changes the start snapshot saw and changes below the watermark, which
// the scan has read already (and reported, or left out).
func (p *Provider) announcedChanges(ctx context.Context, start string, watermark int64, ids []string) ([]provider.StatusChange, error) {
	// Hand-written: sqlc does not read a RETURNS TABLE function's columns,
	// and these may be NULL.
	rows, err := p.pool.Query(ctx, `SELECT * FROM dx_announced_changes($1, $2, $3)`, ids, start, watermark)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var changes []provider.StatusChange
	for rows.Next() {
		var c provider.StatusChange
		var status string
		if err := rows.Scan(&c.Instance, &c.ExecutionID, &status, &c.CustomStatusVersion, &c.Seq); err != nil {
			return nil, err
		}
		c.Status = provider.ExecutionStatus(status)
		changes = append(changes, c)
	}
	return changes, rows.Err()
}

// changesSince reads the changes made by transactions in [watermark, xmin)
// that the start snapshot did not see. It returns them with the current
// snapshot's xmin (the new watermark) and xmax.
func (p *Provider) changesSince(ctx context.Context, start string, watermark int64) ([]provider.StatusChange, int64, int64, error) {
	// Hand-written as announcedChanges.
	rows, err := p.pool.Query(ctx, `SELECT * FROM dx_changes_since($1, $2)`, watermark, start)
	if err != nil {
		return nil, watermark, 0, err
	}
	defer rows.Close()
	var changes []provider.StatusChange
	xmin, xmax := watermark, int64(0)
	for rows.Next() {
		var instance *string
		var c provider.StatusChange
		var execution, version, seq *int64
		var status string
		if err := rows.Scan(&instance, &execution, &status, &version, &seq, &xmin, &xmax); err != nil {
			return nil, watermark, 0, err
		}
		if instance == nil {
			continue // no changes in the window; the row carries only the snapshot
		}
		c.Instance, c.ExecutionID, c.Status, c.CustomStatusVersion, c.Seq = *instance, *execution, provider.ExecutionStatus(status), *version, *seq
		changes = append(changes, c)
	}
	return changes, xmin, xmax, rows.Err()
}
