package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// replayResult is one history checked against the code.
type replayResult struct {
	Instance string `json:"instance"`
	Events   int    `json:"events"`
	// Mismatch is the first nondeterminism; Error any other reason the
	// history could not be replayed (an unregistered orchestration).
	Mismatch *runtime.NondeterminismError `json:"mismatch,omitempty"`
	Error    string                       `json:"error,omitempty"`
}

func (r replayResult) ok() bool { return r.Mismatch == nil && r.Error == "" }

func (c *cli) replayCommand() *cobra.Command {
	var file string
	var all bool
	cmd := &cobra.Command{
		Use:   "replay [INSTANCE...]",
		Short: "Replay recorded histories against this build's orchestrations and report the first mismatch of each",
		Long: "replay runs the orchestration code compiled into this binary against recorded histories, as a worker\n" +
			"would on the instance's next turn, and reports the first decision that no longer matches: the event,\n" +
			"what the history records and what the code did. Run it before a rollout against the running instances:\n" +
			"a mismatch would leave them stuck until the old code comes back.\n\n" +
			"Histories come from the store (INSTANCE..., or --all for every running instance) or from a file written\n" +
			"by `duroxide history INSTANCE -o json` (--file, \"-\" for stdin). The stock duroxide knows the sample\n" +
			"orchestrations; build your own with your registry to replay yours: os.Exit(cli.Main(yourRegistry)).\n" +
			"Exit status 1 when any history does not replay.",
		RunE: func(cmd *cobra.Command, a []string) error {
			if c.registry == nil {
				return usagef("this duroxide has no orchestrations to replay: build one with your registry (cli.Main(reg))")
			}
			switch {
			case file != "" && (all || len(a) > 0):
				return usagef("--file replays one history: give no INSTANCE and no --all with it")
			case file == "" && !all && len(a) == 0:
				return usagef("name the histories: INSTANCE..., --all, or --file FILE")
			}
			results, err := c.replayHistories(cmd, file, all, a)
			if err != nil {
				return err
			}
			return c.reportReplay(results)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "a history written by `duroxide history -o json` (\"-\": stdin)")
	cmd.Flags().BoolVar(&all, "all", false, "every running instance in the store")
	return cmd
}

func (c *cli) replayHistories(cmd *cobra.Command, file string, all bool, ids []string) ([]replayResult, error) {
	if file != "" {
		events, err := readHistoryFile(cmd.InOrStdin(), file)
		if err != nil {
			return nil, err
		}
		return []replayResult{c.replayOne(file, events)}, nil
	}
	if err := c.open(cmd.Context()); err != nil {
		return nil, err
	}
	if all {
		running, err := c.client.List(cmd.Context(), provider.StatusRunning)
		if err != nil {
			return nil, fmt.Errorf("list running instances: %w", err)
		}
		ids = running
	}
	results := make([]replayResult, 0, len(ids))
	for _, id := range ids {
		events, err := c.client.History(cmd.Context(), id)
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", id, err)
		}
		if len(events) == 0 {
			return nil, notFoundHint(fmt.Errorf("history of %s: %w", id, provider.ErrNotFound), id)
		}
		results = append(results, c.replayOne(id, events))
	}
	return results, nil
}

func readHistoryFile(stdin io.Reader, file string) ([]provider.Event, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	var events []provider.Event
	if err := json.Unmarshal(data, &events); err != nil {
		return nil, usagef("%s is not a history (a JSON array of events, as `duroxide history -o json` writes): %v", file, err)
	}
	return events, nil
}

func (c *cli) replayOne(instance string, events []provider.Event) replayResult {
	res := replayResult{Instance: instance, Events: len(events)}
	err := runtime.Replay(c.registry, events)
	var nd *runtime.NondeterminismError
	switch {
	case errors.As(err, &nd):
		nd.Instance = instance
		res.Mismatch = nd
	case err != nil:
		res.Error = err.Error()
	}
	return res
}

func (c *cli) reportReplay(results []replayResult) error {
	failed := 0
	for _, r := range results {
		if !r.ok() {
			failed++
		}
	}
	err := c.print(results, func() {
		for _, r := range results {
			switch {
			case r.Mismatch != nil:
				fmt.Fprintf(c.stdout, "MISMATCH  %s  event %d: the history records %s; the code now does %s\n",
					r.Instance, r.Mismatch.EventID, r.Mismatch.Expected, r.Mismatch.Actual)
			case r.Error != "":
				fmt.Fprintf(c.stdout, "ERROR     %s  %s\n", r.Instance, r.Error)
			default:
				fmt.Fprintf(c.stdout, "ok        %s  %d events\n", r.Instance, r.Events)
			}
		}
		fmt.Fprintf(c.stdout, "%d histories replayed, %d did not match\n", len(results), failed)
	})
	if err != nil {
		return err
	}
	if failed > 0 {
		return &failedError{fmt.Sprintf("%d of %d histories do not replay against this code", failed, len(results))}
	}
	return nil
}
