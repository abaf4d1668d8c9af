package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/internal/inspect"
	"github.com/duroxide/duroxide-go/provider"
)

func (c *cli) workersCommand() *cobra.Command {
	var within time.Duration
	cmd := &cobra.Command{
		Use:   "workers",
		Short: "List the workers that announced themselves recently, with the code they run",
		Args:  args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			list, err := c.provider.ListWorkers(cmd.Context(), provider.ListWorkersRequest{Within: within})
			if err != nil {
				return fmt.Errorf("list workers: %w", err)
			}
			if list == nil {
				list = []provider.WorkerInfo{}
			}
			return c.print(list, func() {
				tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "WORKER\tLAST SEEN\tORCHESTRATIONS\tACTIVITIES\tTAGS")
				for _, wi := range list {
					fmt.Fprintf(tw, "%s\t%s ago\t%s\t%d\t%s\n", wi.ID, time.Since(wi.LastSeen).Round(time.Second),
						strings.Join(inspect.Registered(wi.Orchestrations), ","), len(wi.Activities), tagsColumn(wi.Tags))
				}
				_ = tw.Flush()
			})
		},
	}
	cmd.Flags().DurationVar(&within, "within", time.Minute, "only workers seen this recently")
	return cmd
}

// tagsColumn is the activities a worker takes by tag, as DUROXIDE_ACTIVITY_TAGS
// and the runtime's ActivityTags read it ("-,gpu"), with words for the
// filters that have no tag to show.
func tagsColumn(f provider.TagFilter) string {
	switch s := f.String(); s {
	case "":
		return "(untagged)"
	case provider.AnyTag:
		return "* (any)"
	default:
		return s
	}
}
