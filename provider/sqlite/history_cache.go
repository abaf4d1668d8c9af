package sqlite

import (
	"context"
	"errors"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// turnHistory reads the history a fetched turn replays: from the history
// cache, when it holds the execution, plus the events appended since (often
// none); whole otherwise. What it read whole or in part is cached for the
// next turn.
func (p *Provider) turnHistory(ctx context.Context, instance string, executionID int64) ([]provider.Event, error, error) {
	if known, incarnation, last, ok := p.hist.Known(instance, executionID); ok {
		tail, _, tailLast, decodeErr, err := readHistoryFrom(ctx, p.stmts, instance, executionID,
			resumeAt{event: known[len(known)-1].ID, data: last, incarnation: incarnation})
		switch {
		case err == nil && decodeErr == nil:
			events := append(known, tail...)
			if len(tail) > 0 {
				p.hist.Store(instance, incarnation, executionID, events, tailLast)
			}
			return events, nil, nil
		case err != nil && !errors.Is(err, errHistoryMoved):
			return nil, nil, err
		}
	}
	events, incarnation, last, decodeErr, err := readHistoryFrom(ctx, p.stmts, instance, executionID, resumeAt{})
	if err != nil || decodeErr != nil {
		p.hist.Forget(instance)
		return events, decodeErr, err
	}
	p.hist.Store(instance, incarnation, executionID, events, last)
	return events, nil, nil
}

// cacheAcked adds the events a committed ack wrote to the history cache (all
// of them when the ack created the instance, as incarnation). They are
// decoded from their stored form, so the next turn replays exactly what a
// read from the store would give.
func (p *Provider) cacheAcked(instance string, created bool, incarnation int64, enc encode.Ack) {
	if p.hist == nil || len(enc.Events) == 0 {
		return
	}
	events := make([]provider.Event, 0, len(enc.Events))
	for _, e := range enc.Events {
		ev, err := provider.DecodeEvent(e.Data)
		if err != nil {
			p.hist.Forget(instance)
			return
		}
		events = append(events, ev)
	}
	last := enc.Events[len(enc.Events)-1].Data
	if created {
		p.hist.Store(instance, incarnation, enc.ExecutionID, events, last)
		return
	}
	p.hist.Extend(instance, enc.ExecutionID, events, last)
}
