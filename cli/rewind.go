package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/runtime"
)

// rewindView is what rewind and retry print with -o json.
type rewindView struct {
	Instance  string `json:"instance"`
	Execution int64  `json:"execution"`
	Kept      int    `json:"kept"`
	Dropped   int    `json:"dropped"`
	Step      string `json:"step,omitempty"`
	Carried   int    `json:"carried,omitempty"`
}

func (c *cli) rewindCommand() *cobra.Command {
	return c.rewindLike("rewind", "Run a failed instance again from before its failing step, as a new execution",
		"rewind runs a failed root instance again once its cause is fixed (a dependency back, a bug fixed in a new\n"+
			"worker build): a new execution starts from the failed one's events before the failing activity or\n"+
			"sub-orchestration (from the first attempt of its retries), so the steps that completed before it are\n"+
			"replayed, not run again. The cut moves earlier past anything still open at it, so no result is lost;\n"+
			"events received after it are delivered again. The failed execution keeps its history\n"+
			"(history --all-executions). retry runs the whole execution again from its input instead.\n"+
			"Refused (exit 1) for an instance that is not Failed, a sub-orchestration (rewind its root), or one\n"+
			"already rewound.")
}

func (c *cli) retryCommand() *cobra.Command {
	return c.rewindLike("retry", "Run a failed instance again from its input, as a new execution",
		"retry runs a failed root instance again from the start with the same input, as a new execution; the\n"+
			"failed execution keeps its history. Every activity runs again; rewind keeps the ones that completed.",
		runtime.RewindToStart())
}

// rewindLike builds rewind and retry, which differ in where the new
// execution starts.
func (c *cli) rewindLike(name, short, long string, opts ...runtime.RewindOption) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use: name + " INSTANCE", Short: short, Long: long, Args: args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error { return c.rewind(cmd, a[0], wait, opts...) },
	}
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait this long for the new execution to finish (exit 1 unless it completes)")
	return cmd
}

func (c *cli) rewind(cmd *cobra.Command, id string, wait time.Duration, opts ...runtime.RewindOption) error {
	if wait < 0 {
		return usagef("--wait must not be negative, got %v", wait)
	}
	if err := c.open(cmd.Context()); err != nil {
		return err
	}
	res, err := c.client.Rewind(cmd.Context(), id, opts...)
	if err != nil {
		return err
	}
	v := rewindView{Instance: id, Execution: res.Execution, Kept: res.Kept, Dropped: res.Dropped, Step: res.Step, Carried: res.Carried}
	if err := c.print(v, func() { fmt.Fprintln(c.stdout, describeRewind(v)) }); err != nil {
		return err
	}
	if wait == 0 {
		return nil
	}
	return c.waitFor(cmd, id, wait)
}

// describeRewind says what a rewind queued, in one line.
func describeRewind(v rewindView) string {
	from := "from its start"
	if v.Step != "" {
		from = "from before " + v.Step
	} else if v.Kept > 1 {
		from = "from before its end"
	}
	line := fmt.Sprintf("%s: execution %d runs %s (keeps %d of the failed execution's events, runs %d again)",
		v.Instance, v.Execution, from, v.Kept, v.Dropped)
	if v.Carried > 0 {
		line += fmt.Sprintf("; %d event(s) received after the cut delivered again", v.Carried)
	}
	return line
}
