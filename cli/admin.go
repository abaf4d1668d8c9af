package cli

import (
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/provider"
)

func (c *cli) listCommand() *cobra.Command {
	var status string
	var limit int
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List instances with their status, orchestration and last update",
		Example: "  duroxide list --status Running",
		Args:    args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			st := provider.ExecutionStatus(status)
			if status != "" && !st.Valid() {
				return usagef("--status must be Running, Completed, Failed or Terminated, not %q", status)
			}
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			ids, err := c.client.List(cmd.Context(), st)
			if err != nil {
				return fmt.Errorf("list instances: %w", err)
			}
			slices.Sort(ids)
			more := 0
			if limit > 0 && len(ids) > limit {
				more, ids = len(ids)-limit, ids[:limit]
			}
			infos := make([]provider.InstanceInfo, 0, len(ids))
			for _, id := range ids {
				info, err := c.provider.GetInstanceInfo(cmd.Context(), provider.InstanceRequest{Instance: id})
				if err != nil {
					return fmt.Errorf("describe instance %s: %w", id, err)
				}
				infos = append(infos, info)
			}
			if more > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d more instances not shown (--limit %d)\n", more, limit)
			}
			return c.print(listView(infos), func() {
				w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "INSTANCE\tSTATUS\tORCHESTRATION\tEXECUTION\tUPDATED")
				for _, i := range infos {
					fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", i.Instance, i.Status, i.OrchestrationName, i.CurrentExecutionID,
						i.UpdatedAt.UTC().Format(time.RFC3339))
				}
				_ = w.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only instances with this status (Running, Completed, Failed, Terminated)")
	cmd.Flags().IntVar(&limit, "limit", 500, "show at most this many instances (0: all)")
	return cmd
}

type listEntry struct {
	Instance      string    `json:"instance"`
	Status        string    `json:"status"`
	Orchestration string    `json:"orchestration"`
	ExecutionID   int64     `json:"executionId"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

func listView(infos []provider.InstanceInfo) []listEntry {
	out := make([]listEntry, 0, len(infos))
	for _, i := range infos {
		out = append(out, listEntry{i.Instance, string(i.Status), i.OrchestrationName, i.CurrentExecutionID, i.UpdatedAt})
	}
	return out
}

func (c *cli) deleteCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "delete INSTANCE",
		Short: "Delete a finished instance, its sub-orchestrations and all their history",
		Args:  args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			res, err := c.client.Delete(cmd.Context(), a[0], force)
			if err != nil {
				return notFoundHint(fmt.Errorf("delete %s: %w", a[0], err), a[0])
			}
			return c.printDeleted(res)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "delete a running instance too (its workers' results are then dropped)")
	return cmd
}

func (c *cli) purgeCommand() *cobra.Command {
	var olderThan time.Duration
	var all bool
	var limit int
	cmd := &cobra.Command{
		Use:     "purge",
		Short:   "Delete finished instances (and their sub-orchestrations) in bulk",
		Example: "  duroxide purge --older-than 720h",
		Args:    args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (olderThan > 0) == all {
				return usagef("purge needs exactly one of --older-than DURATION or --all")
			}
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			filter := provider.DeleteFilter{Limit: limit}
			if olderThan > 0 {
				filter.CompletedBefore = time.Now().Add(-olderThan)
			}
			res, err := c.client.Purge(cmd.Context(), filter)
			if err != nil {
				return fmt.Errorf("purge: %w", err)
			}
			return c.printDeleted(res)
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "only instances that finished longer ago than this")
	cmd.Flags().BoolVar(&all, "all", false, "every finished instance")
	cmd.Flags().IntVar(&limit, "limit", 0, "delete at most this many root instances (0: no cap)")
	return cmd
}

// deletedView and statsView give -o json the same camelCase keys as the other commands.
type deletedView struct {
	Instances  int64 `json:"instancesDeleted"`
	Executions int64 `json:"executionsDeleted"`
	Events     int64 `json:"eventsDeleted"`
	Messages   int64 `json:"messagesDeleted"`
}

type statsView struct {
	Instances struct {
		Total      int64 `json:"total"`
		Running    int64 `json:"running"`
		Completed  int64 `json:"completed"`
		Failed     int64 `json:"failed"`
		Terminated int64 `json:"terminated"`
	} `json:"instances"`
	Executions    int64 `json:"executions"`
	HistoryEvents int64 `json:"historyEvents"`
	Queues        struct {
		Orchestrator int64 `json:"orchestrator"`
		Worker       int64 `json:"worker"`
		Delayed      int64 `json:"delayed"`
		Locked       int64 `json:"locked"`
	} `json:"queues"`
}

func newStatsView(m provider.SystemMetrics, q provider.QueueDepths) statsView {
	var v statsView
	v.Instances.Total, v.Instances.Running, v.Instances.Completed = m.TotalInstances, m.Running, m.Completed
	v.Instances.Failed, v.Instances.Terminated = m.Failed, m.Terminated
	v.Executions, v.HistoryEvents = m.TotalExecutions, m.TotalEvents
	v.Queues.Orchestrator, v.Queues.Worker, v.Queues.Delayed, v.Queues.Locked = q.Orchestrator, q.Worker, q.Delayed, q.Locked
	return v
}

func (c *cli) printDeleted(r provider.DeleteResult) error {
	v := deletedView{r.InstancesDeleted, r.ExecutionsDeleted, r.EventsDeleted, r.MessagesDeleted}
	return c.print(v, func() {
		fmt.Fprintf(c.stdout, "deleted %d instances, %d executions, %d history events, %d queued messages\n",
			r.InstancesDeleted, r.ExecutionsDeleted, r.EventsDeleted, r.MessagesDeleted)
	})
}

func (c *cli) statsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Show instance counts and queue depths",
		Args:  args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			m, err := c.provider.GetSystemMetrics(cmd.Context())
			if err != nil {
				return fmt.Errorf("instance counts: %w", err)
			}
			q, err := c.provider.GetQueueDepths(cmd.Context())
			if err != nil {
				return fmt.Errorf("queue depths: %w", err)
			}
			return c.print(newStatsView(m, q), func() {
				fmt.Fprintf(c.stdout, "instances: %d (running %d, completed %d, failed %d, terminated %d), executions %d, history events %d\n",
					m.TotalInstances, m.Running, m.Completed, m.Failed, m.Terminated, m.TotalExecutions, m.TotalEvents)
				fmt.Fprintf(c.stdout, "queues: orchestrator %d, worker %d, delayed %d, locked %d\n", q.Orchestrator, q.Worker, q.Delayed, q.Locked)
			})
		},
	}
}
