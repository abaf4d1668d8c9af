package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// historyFile is what `duroxide history -o json` writes and `replay --file`
// reads: an execution's events and the instance they belong to, which the
// replay needs because the code may derive decisions from it. Files written
// before it named the instance are a bare array of events.
type historyFile struct {
	Instance string           `json:"instance"`
	Events   []provider.Event `json:"events"`
}

// replayResult is one history checked against the code.
type replayResult struct {
	Instance string `json:"instance"`
	// File is the history's file, with --file.
	File   string `json:"file,omitempty"`
	Events int    `json:"events"`
	// Mismatch is the first nondeterminism; Error any other reason the
	// history could not be replayed (an unregistered orchestration).
	Mismatch *runtime.NondeterminismError `json:"mismatch,omitempty"`
	Error    string                       `json:"error,omitempty"`
}

func (r replayResult) ok() bool { return r.Mismatch == nil && r.Error == "" }

// name is how the report names the history: its instance, else its file.
func (r replayResult) name() string {
	if r.Instance == "" {
		return r.File
	}
	return r.Instance
}

func (c *cli) replayCommand() *cobra.Command {
	var file, instance string
	var all bool
	cmd := &cobra.Command{
		Use:   "replay [INSTANCE...]",
		Short: "Replay recorded histories against this build's orchestrations and report the first mismatch of each",
		Long: "replay runs the orchestration code compiled into this binary against recorded histories, as a worker\n" +
			"would on the instance's next turn, and reports the first decision that no longer matches: the event,\n" +
			"what the history records and what the code did. Run it before a rollout against the running instances:\n" +
			"a mismatch would leave them stuck until the old code comes back.\n\n" +
			"Histories come from the store (INSTANCE..., or --all for every running instance) or from a file written\n" +
			"by `duroxide history INSTANCE -o json` (--file, \"-\" for stdin); name the instance with --instance if the\n" +
			"file does not (files written before histories named it). The stock duroxide knows the sample\n" +
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
			case file == "" && instance != "":
				return usagef("--instance names the instance of a --file history; the store's histories name theirs")
			}
			if file != "" {
				res, err := c.replayFile(cmd.InOrStdin(), file, instance)
				if err != nil {
					return err
				}
				return c.reportReplay([]replayResult{res})
			}
			results, err := c.replayStored(cmd, all, a)
			if err != nil {
				return err
			}
			return c.reportReplay(results)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "a history written by `duroxide history -o json` (\"-\": stdin)")
	cmd.Flags().StringVar(&instance, "instance", "", "the instance of the --file history, if the file does not name it")
	cmd.Flags().BoolVar(&all, "all", false, "every running instance in the store")
	return cmd
}

// replayFile replays the history in file, as the instance the file or the
// --instance flag names.
func (c *cli) replayFile(stdin io.Reader, file, instance string) (replayResult, error) {
	h, err := readHistoryFile(stdin, file)
	if err != nil {
		return replayResult{}, err
	}
	switch {
	case h.Instance == "":
		h.Instance = instance
	case instance != "" && instance != h.Instance:
		return replayResult{}, usagef("%s is the history of %s, not of --instance %s", file, h.Instance, instance)
	}
	res := c.replayOne(h.Instance, h.Events)
	res.File = file
	return res, nil
}

func (c *cli) replayStored(cmd *cobra.Command, all bool, ids []string) ([]replayResult, error) {
	if err := c.open(cmd.Context()); err != nil {
		return nil, err
	}
	if all {
		running, err := c.listAll(cmd.Context(), provider.ListRequest{Status: provider.StatusRunning, Limit: provider.MaxListLimit})
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

// readHistoryFile reads a history as `duroxide history -o json` writes it,
// or as a bare array of events, as it wrote it before naming the instance.
func readHistoryFile(stdin io.Reader, file string) (historyFile, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return historyFile{}, fmt.Errorf("read history: %w", err)
	}
	var h historyFile
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("[")) {
		err = json.Unmarshal(data, &h.Events)
	} else {
		err = json.Unmarshal(data, &h)
	}
	if err != nil {
		return historyFile{}, usagef("%s is not a history (as `duroxide history -o json` writes: "+
			`{"instance": ..., "events": [...]}`+"): %v", file, err)
	}
	return h, nil
}

func (c *cli) replayOne(instance string, events []provider.Event) replayResult {
	res := replayResult{Instance: instance, Events: len(events)}
	err := runtime.Replay(c.registry, events, runtime.ReplayInstance(instance))
	var nd *runtime.NondeterminismError
	switch {
	case errors.As(err, &nd):
		res.Mismatch = nd
	case errors.Is(err, runtime.ErrReplayNeedsInstance):
		// Only a file can lack its instance: the store's histories are read by it.
		res.Error = "the file does not name its instance and the code reads it " +
			"(ctx.InstanceID, ctx.NewGUID or a sub-orchestration's default ID): pass --instance"
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
					r.name(), r.Mismatch.EventID, r.Mismatch.Expected, r.Mismatch.Actual)
			case r.Error != "":
				fmt.Fprintf(c.stdout, "ERROR     %s  %s\n", r.name(), r.Error)
			default:
				fmt.Fprintf(c.stdout, "ok        %s  %d events\n", r.name(), r.Events)
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

// listAll follows req's pages to the end and returns the IDs.
func (c *cli) listAll(ctx context.Context, req provider.ListRequest) ([]string, error) {
	var ids []string
	for {
		page, err := c.client.List(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, i := range page.Instances {
			ids = append(ids, i.Instance)
		}
		if page.Next == "" {
			return ids, nil
		}
		req.After = page.Next
	}
}
