package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/duroxide/duroxide-go/internal/inspect"
	"github.com/duroxide/duroxide-go/provider"
)

// listFlags are list's filters and paging as typed.
type listFlags struct {
	status, orchestration, prefix string
	since, before                 string // created
	updatedSince, updatedBefore   string
	after                         string
	limit                         int
}

func (c *cli) listCommand() *cobra.Command {
	var lf listFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List instances, newest first, one page at a time",
		Long: "List instances newest first, with their status, orchestration, execution, age and last update.\n" +
			"A queued start no worker has run yet is Pending; a running instance whose last turn was handed\n" +
			"back (code that no longer matches its history, an unregistered name, a store error) is Stalled.\n" +
			"One query per page; when there are more, the command to see the next page is printed on stderr.",
		Example: `  duroxide list --status Stalled
  duroxide list --orchestration Approval --since 1h
  duroxide list --prefix order- --limit 20 --after <cursor from the previous page>`,
		Args: args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := lf.request(time.Now())
			if err != nil {
				return err
			}
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			page, err := c.client.List(cmd.Context(), req)
			if err != nil {
				return fmt.Errorf("list instances: %w", err)
			}
			if page.Next != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "more instances: duroxide list %s--after %s\n", repeatFlags(cmd), page.Next)
			}
			return c.print(listPage{Instances: listView(page.Instances), Next: page.Next}, func() {
				printList(c.stdout, page.Instances, time.Now())
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&lf.status, "status", "", "only this status: Pending, Running, Stalled, Completed, Failed, Terminated or ContinuedAsNew")
	f.StringVar(&lf.orchestration, "orchestration", "", "only instances of this orchestration")
	f.StringVar(&lf.prefix, "prefix", "", "only instance IDs starting with this")
	f.StringVar(&lf.since, "since", "", "only instances created since: a duration ago (1h, 30m) or an RFC 3339 time")
	f.StringVar(&lf.before, "before", "", "only instances created before: a duration ago or an RFC 3339 time")
	f.StringVar(&lf.updatedSince, "updated-since", "", "only instances last changed since: a duration ago or an RFC 3339 time")
	f.StringVar(&lf.updatedBefore, "updated-before", "", "only instances last changed before: a duration ago or an RFC 3339 time")
	f.StringVar(&lf.after, "after", "", "the page after this cursor (printed when a page has more)")
	f.IntVar(&lf.limit, "limit", 50, fmt.Sprintf("instances per page (1 to %d)", provider.MaxListLimit))
	return cmd
}

// request turns list's flags into a request, refusing what the store would
// refuse, and more, as usage errors (exit 2).
func (lf listFlags) request(now time.Time) (provider.ListRequest, error) {
	req := provider.ListRequest{Status: provider.ExecutionStatus(lf.status), Orchestration: lf.orchestration, IDPrefix: lf.prefix,
		Limit: lf.limit, After: lf.after}
	if lf.limit < 1 || lf.limit > provider.MaxListLimit {
		return req, usagef("--limit must be between 1 and %d, not %d", provider.MaxListLimit, lf.limit)
	}
	for _, tf := range []struct {
		flag, value string
		into        *time.Time
	}{
		{"--since", lf.since, &req.CreatedAfter}, {"--before", lf.before, &req.CreatedBefore},
		{"--updated-since", lf.updatedSince, &req.UpdatedAfter}, {"--updated-before", lf.updatedBefore, &req.UpdatedBefore},
	} {
		t, err := timeFlag(tf.flag, tf.value, now)
		if err != nil {
			return req, err
		}
		*tf.into = t
	}
	if err := req.Validate(); err != nil {
		return req, usagef("%s", strings.TrimPrefix(err.Error(), "list instances: "))
	}
	return req, nil
}

// timeFlag reads a duration ago or an RFC 3339 time; "" is none.
func timeFlag(name, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, usagef("%s takes a duration ago (1h, 30m) or an RFC 3339 time (2026-11-27T10:00:00Z), not %q", name, v)
	}
	return t, nil
}

// repeatFlags is the list flags the user set, but --after, to print with
// the next page's cursor.
func repeatFlags(cmd *cobra.Command) string {
	var b strings.Builder
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name != "after" {
			fmt.Fprintf(&b, "--%s %s ", f.Name, shellQuote(f.Value.String()))
		}
	})
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(strings.ContainsRune("-_.:/=@,+", r) || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func printList(w io.Writer, infos []provider.InstanceInfo, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE\tSTATUS\tORCHESTRATION\tEXECUTION\tAGE\tUPDATED")
	for _, i := range infos {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", i.Instance, inspect.ShownStatus(i), i.OrchestrationName, i.CurrentExecutionID,
			inspect.Age(now.Sub(i.CreatedAt)), i.UpdatedAt.UTC().Format(time.RFC3339))
	}
	_ = tw.Flush()
}

type listPage struct {
	Instances []listEntry `json:"instances"`
	Next      string      `json:"next,omitempty"`
}

type listEntry struct {
	Instance      string                 `json:"instance"`
	Status        string                 `json:"status"`
	Orchestration string                 `json:"orchestration"`
	ExecutionID   int64                  `json:"executionId"`
	CreatedAt     time.Time              `json:"createdAt"`
	UpdatedAt     time.Time              `json:"updatedAt"`
	LastError     *provider.ErrorDetails `json:"lastError,omitempty"`
}

func listView(infos []provider.InstanceInfo) []listEntry {
	out := make([]listEntry, 0, len(infos))
	for _, i := range infos {
		out = append(out, listEntry{i.Instance, inspect.ShownStatus(i), i.OrchestrationName, i.CurrentExecutionID, i.CreatedAt, i.UpdatedAt, i.LastError})
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
	var all, dryRun, yes bool
	var limit int
	cmd := &cobra.Command{
		Use:   "purge",
		Short: "Delete finished instances (and their sub-orchestrations) in bulk",
		Long: "Delete finished root instances (Completed, Failed, Terminated) with their sub-orchestrations and\n" +
			"history. --dry-run lists what would go and deletes nothing. At a terminal, purge says how many\n" +
			"root instances it is about to delete and asks first (--yes skips the question).",
		Example: "  duroxide purge --older-than 720h --dry-run\n  duroxide purge --older-than 720h --yes",
		Args:    args(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (olderThan > 0) == all {
				return usagef("purge needs exactly one of --older-than DURATION or --all")
			}
			if limit < 0 {
				return usagef("--limit must not be negative, got %d", limit)
			}
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			filter := provider.DeleteFilter{Limit: limit}
			if olderThan > 0 {
				filter.CompletedBefore = time.Now().Add(-olderThan)
			}
			if dryRun || (c.terminal && !yes) {
				doomed, err := c.purgeCandidates(cmd.Context(), filter)
				if err != nil {
					return fmt.Errorf("purge: %w", err)
				}
				if dryRun {
					return c.print(doomed, func() { printDoomed(c.stdout, doomed) })
				}
				if !c.confirm(cmd, fmt.Sprintf("Delete %d finished root instances with their sub-orchestrations and history?", len(doomed))) {
					return &failedError{"purge: nothing deleted (not confirmed)"}
				}
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
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list the root instances purge would delete; delete nothing")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for a confirmation at a terminal")
	return cmd
}

// purgeCandidates lists the root instances filter would delete: finished,
// finished before filter.CompletedBefore (an instance's last update is its
// end), oldest first, at most filter.Limit.
func (c *cli) purgeCandidates(ctx context.Context, filter provider.DeleteFilter) ([]string, error) {
	var doomed []provider.InstanceInfo
	for _, st := range []provider.ExecutionStatus{provider.StatusCompleted, provider.StatusFailed, provider.StatusTerminated} {
		req := provider.ListRequest{Status: st, Limit: provider.MaxListLimit}
		for {
			page, err := c.client.List(ctx, req)
			if err != nil {
				return nil, err
			}
			for _, i := range page.Instances {
				if i.ParentInstance == "" && (filter.CompletedBefore.IsZero() || i.UpdatedAt.Before(filter.CompletedBefore)) {
					doomed = append(doomed, i)
				}
			}
			if page.Next == "" {
				break
			}
			req.After = page.Next
		}
	}
	slices.SortFunc(doomed, func(a, b provider.InstanceInfo) int {
		if c := a.UpdatedAt.Compare(b.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Instance, b.Instance)
	})
	if filter.Limit > 0 && len(doomed) > filter.Limit {
		doomed = doomed[:filter.Limit]
	}
	ids := make([]string, len(doomed))
	for i, d := range doomed {
		ids[i] = d.Instance
	}
	return ids, nil
}

func printDoomed(w io.Writer, ids []string) {
	fmt.Fprintf(w, "would delete %d root instances (and their sub-orchestrations):\n", len(ids))
	for _, id := range ids {
		fmt.Fprintln(w, " ", id)
	}
}

// confirm asks question on stderr and reads the answer: only y or yes
// confirms.
func (c *cli) confirm(cmd *cobra.Command, question string) bool {
	fmt.Fprintf(cmd.ErrOrStderr(), "%s [y/N] ", question)
	answer, _ := bufio.NewReader(c.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	return false
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
		// Stalled are among Running; Pending (queued starts) are not in Total.
		Stalled int64 `json:"stalled"`
		Pending int64 `json:"pending"`
	} `json:"instances"`
	Executions    int64 `json:"executions"`
	HistoryEvents int64 `json:"historyEvents"`
	Queues        struct {
		Orchestrator int64 `json:"orchestrator"`
		Worker       int64 `json:"worker"`
		Delayed      int64 `json:"delayed"`
		Locked       int64 `json:"locked"`
		// OldestOrchestrator and OldestWorker: when the longest-waiting ready message became visible.
		OldestOrchestrator *time.Time `json:"oldestOrchestrator,omitempty"`
		OldestWorker       *time.Time `json:"oldestWorker,omitempty"`
	} `json:"queues"`
}

func newStatsView(m provider.SystemMetrics, q provider.QueueDepths) statsView {
	var v statsView
	v.Instances.Total, v.Instances.Running, v.Instances.Completed = m.TotalInstances, m.Running, m.Completed
	v.Instances.Failed, v.Instances.Terminated = m.Failed, m.Terminated
	v.Instances.Stalled, v.Instances.Pending = m.Stalled, m.Pending
	v.Executions, v.HistoryEvents = m.TotalExecutions, m.TotalEvents
	v.Queues.Orchestrator, v.Queues.Worker, v.Queues.Delayed, v.Queues.Locked = q.Orchestrator, q.Worker, q.Delayed, q.Locked
	if !q.OldestOrchestrator.IsZero() {
		v.Queues.OldestOrchestrator = &q.OldestOrchestrator
	}
	if !q.OldestWorker.IsZero() {
		v.Queues.OldestWorker = &q.OldestWorker
	}
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
				fmt.Fprintf(c.stdout, "instances: %d (running %d of which stalled %d, completed %d, failed %d, terminated %d), pending starts %d, executions %d, history events %d\n",
					m.TotalInstances, m.Running, m.Stalled, m.Completed, m.Failed, m.Terminated, m.Pending, m.TotalExecutions, m.TotalEvents)
				fmt.Fprintf(c.stdout, "queues: orchestrator %d, worker %d, delayed %d, locked %d%s\n", q.Orchestrator, q.Worker, q.Delayed, q.Locked, oldestReady(q, time.Now()))
			})
		},
	}
}

// oldestReady says how long the oldest ready messages have waited, "" when
// none waits.
func oldestReady(q provider.QueueDepths, now time.Time) string {
	var parts []string
	if !q.OldestOrchestrator.IsZero() {
		parts = append(parts, "orchestrator "+inspect.Age(now.Sub(q.OldestOrchestrator)))
	}
	if !q.OldestWorker.IsZero() {
		parts = append(parts, "worker "+inspect.Age(now.Sub(q.OldestWorker)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; oldest ready waits: " + strings.Join(parts, ", ")
}
