package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// followPoll is how often history --follow reads an instance's new events.
const followPoll = 200 * time.Millisecond

// followHistory prints id's current execution, then each event as it is
// recorded, moving on to the next execution after a continue-as-new, until
// an execution ends otherwise or ctx does.
func (c *cli) followHistory(ctx context.Context, id string) error {
	st, err := c.firstTurnOf(ctx, id)
	if err != nil {
		return notFoundHint(fmt.Errorf("history of %s: %w", id, err), id)
	}
	execution := st.ExecutionID
	var shown []provider.Event
	for {
		events, err := c.provider.ReadHistory(ctx, provider.ExecutionRequest{Instance: id, ExecutionID: execution})
		if err != nil {
			return fmt.Errorf("history of %s: %w", id, err)
		}
		if len(events) > len(shown) {
			printHistoryFrom(c.stdout, events, len(shown), len(shown) == 0)
			shown = events
		}
		if n := len(shown); n > 0 && shown[n-1].Kind.EndsExecution() {
			if shown[n-1].Kind != provider.EventOrchestrationContinuedAsNew {
				return nil
			}
			execution, shown = execution+1, nil
			fmt.Fprintf(c.stdout, "\nexecution %d\n", execution)
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followPoll):
		}
	}
}

// firstTurnOf returns id's status once a worker ran its first turn: a
// pending instance has no history yet.
func (c *cli) firstTurnOf(ctx context.Context, id string) (*runtime.Status, error) {
	for {
		st, err := c.client.Status(ctx, id)
		if err != nil || st.Status != runtime.StatusPending {
			return st, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(followPoll):
		}
	}
}
