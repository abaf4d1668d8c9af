package sqlite

import (
	"context"
	"errors"

	"github.com/duroxide/duroxide-go/provider"
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
