package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/provider"
)

// watchEntry is one status change as watch prints it.
type watchEntry struct {
	Time                time.Time `json:"time"`
	Instance            string    `json:"instance"`
	ExecutionID         int64     `json:"executionId"`
	Status              string    `json:"status"`
	CustomStatusVersion int64     `json:"customStatusVersion"`
}

func (c *cli) watchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "watch [INSTANCE...]",
		Short: "Print status changes as they happen: of every instance, or until the named ones end",
		Long: "watch prints a line per status change reported by the store (a new execution, a custom status\n" +
			"update, an end): of every instance until interrupted, or of the named instances, each first as it\n" +
			"stands, until each has ended. -o json prints one JSON object per line.",
		Example: "  duroxide watch\n  duroxide watch order-42 order-43",
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			return c.watch(cmd.Context(), a)
		},
	}
}

// watch prints changes until ctx ends or, with names, until each named
// instance reached a final status (one that already has is not waited for).
func (c *cli) watch(ctx context.Context, names []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := c.provider.Watch(ctx)
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	open, err := c.unfinished(ctx, names)
	if err != nil {
		return err
	}
	if len(names) > 0 && len(open) == 0 {
		return nil
	}
	for ch := range changes {
		if len(names) > 0 && !slices.Contains(names, ch.Instance) {
			continue
		}
		c.printChange(ch)
		if ch.Status.Terminal() && ch.Status != provider.StatusContinuedAsNew {
			delete(open, ch.Instance)
			if len(names) > 0 && len(open) == 0 {
				return nil
			}
		}
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil // interrupted: watching all has no other end
	}
	return ctx.Err()
}

// unfinished prints where each named instance stands, as kubectl get -w
// does first, and returns the set of those not yet in a final status; an
// unknown name is an error.
func (c *cli) unfinished(ctx context.Context, names []string) (map[string]bool, error) {
	open := map[string]bool{}
	for _, id := range names {
		st, err := c.client.Status(ctx, id)
		if err != nil {
			return nil, notFoundHint(err, id)
		}
		c.printChange(provider.StatusChange{Instance: id, ExecutionID: st.ExecutionID,
			Status: provider.ExecutionStatus(st.Status), CustomStatusVersion: st.CustomStatusVersion})
		if !st.Finished() {
			open[id] = true
		}
	}
	return open, nil
}

func (c *cli) printChange(ch provider.StatusChange) {
	e := watchEntry{Time: time.Now().UTC(), Instance: ch.Instance, ExecutionID: ch.ExecutionID,
		Status: string(ch.Status), CustomStatusVersion: ch.CustomStatusVersion}
	if c.output == "json" {
		_ = json.NewEncoder(c.stdout).Encode(e) // one object per line
		return
	}
	fmt.Fprintf(c.stdout, "%s  %s  %s  execution %d  custom status v%d\n", e.Time.Format("15:04:05.000"),
		e.Instance, e.Status, e.ExecutionID, e.CustomStatusVersion)
}
