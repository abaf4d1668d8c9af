package sqlite

import (
	"context"
	"errors"

	"github.com/duroxide/duroxide-go/provider"
)

// turnHistory reads the history a fetched turn replays: from the history
// cache, when it holds the execution, plus the events appended since (often
// none); whole otherwise. What it read whole or in part is cached for the
// next turn, with the custom status the same statement read: the turn's lock
// may have expired since it was taken, and another process's turn committed.
func (p *Provider) turnHistory(ctx context.Context, instance string, executionID int64) ([]provider.Event, error, error) {
	if known, incarnation, last, ok := p.eng.Hist.Known(instance, executionID); ok {
		tail, err := readHistoryFrom(ctx, p.stmts, instance, executionID,
			resumeAt{event: known[len(known)-1].ID, data: last, incarnation: incarnation})
		switch {
		case err == nil && tail.decodeErr == nil:
			events := append(known, tail.events...)
			if len(tail.events) > 0 {
				p.eng.Hist.Store(instance, incarnation, executionID, events, tail.last)
			}
			p.eng.Hist.NoteCustomStatus(instance, executionID, events[len(events)-1].ID, tail.custom)
			return events, nil, nil
		case err != nil && !errors.Is(err, errHistoryMoved):
			return nil, nil, err
		}
	}
	read, err := readHistoryFrom(ctx, p.stmts, instance, executionID, resumeAt{})
	if err != nil || read.decodeErr != nil {
		p.eng.Hist.Forget(instance)
		return read.events, read.decodeErr, err
	}
	p.eng.Hist.Store(instance, read.incarnation, executionID, read.events, read.last)
	if len(read.events) > 0 {
		p.eng.Hist.NoteCustomStatus(instance, executionID, read.events[len(read.events)-1].ID, read.custom)
	}
	return read.events, nil, nil
}
