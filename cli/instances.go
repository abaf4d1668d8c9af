package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/duroxide/duroxide-go/internal/inspect"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

func (c *cli) startCommand() *cobra.Command {
	var id, input, version, reuse, owner string
	var events []string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "start ORCHESTRATION",
		Short: "Start an instance and optionally wait for it",
		Long: "Start an instance. An --id that an instance already has (running or finished), or that a queued start\n" +
			"holds, is refused (exit 1) unless --id-reuse allows replacing it: allow-finished replaces a finished\n" +
			"instance, terminate-running any; the old instance and its history are deleted. A start repeated with\n" +
			"the --owner the instance recorded is a retry: it succeeds and starts nothing.",
		Example: `  duroxide start Greeting --input '"world"' --id greet-1
  duroxide start Greeting --input '"again"' --id greet-1 --id-reuse allow-finished
  duroxide start Chain --input '{"n": 3}' --wait 1m
  duroxide start Approval --input '{"item": "desk"}' --event 'approval={"approved": true, "by": "me"}'`,
		Args: args("ORCHESTRATION"),
		RunE: func(cmd *cobra.Command, a []string) error {
			payload, err := jsonArg("--input", input)
			if err != nil {
				return err
			}
			policy, err := reusePolicy(reuse)
			if err != nil {
				return err
			}
			opts := []runtime.StartOption{runtime.StartIDReuse(policy)}
			for _, e := range events {
				name, data, err := eventArg(e)
				if err != nil {
					return err
				}
				opts = append(opts, runtime.StartWithEvent(name, data))
			}
			if id == "" {
				id = newInstanceID(a[0])
			}
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			if version != "" {
				opts = append(opts, runtime.StartVersion(version))
			}
			if owner != "" {
				opts = append(opts, runtime.StartOwner(owner))
			}
			if err := c.client.Start(cmd.Context(), id, a[0], payload, opts...); err != nil {
				return err
			}
			if wait <= 0 {
				return c.print(map[string]string{"instance": id}, func() { fmt.Fprintf(c.stdout, "started %s\n", id) })
			}
			return c.waitFor(cmd, id, wait)
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "instance ID (default: the orchestration name and a random suffix)")
	cmd.Flags().StringVar(&input, "input", "", "input as JSON (default null)")
	cmd.Flags().StringVar(&version, "version", "", "orchestration version (default: the latest the worker registers)")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait this long for the instance to finish and print its status")
	cmd.Flags().StringVar(&reuse, "id-reuse", "fail", "when --id is taken: fail, allow-finished or terminate-running")
	cmd.Flags().StringVar(&owner, "owner", "", "who starts the instance, recorded with it; a start repeated with it is a retry")
	cmd.Flags().StringArrayVar(&events, "event", nil, "NAME or NAME=JSON: an event the instance receives with its start, before its first turn (repeatable)")
	return cmd
}

// eventArg reads --event NAME or NAME=JSON (the data; null without it).
func eventArg(arg string) (string, json.RawMessage, error) {
	name, data, hasData := strings.Cut(arg, "=")
	if name == "" {
		return "", nil, usagef("--event needs a name: NAME or NAME=JSON, got %q", arg)
	}
	if !hasData {
		return name, json.RawMessage("null"), nil
	}
	payload, err := jsonArg("--event "+name, data)
	if err != nil {
		return "", nil, err
	}
	return name, payload, nil
}

// reusePolicies maps --id-reuse values to the runtime's policies.
var reusePolicies = map[string]runtime.IDReusePolicy{
	"fail":              runtime.IDReuseFail,
	"allow-finished":    runtime.IDReuseAllowFinished,
	"terminate-running": runtime.IDReuseTerminateRunning,
}

func reusePolicy(flag string) (runtime.IDReusePolicy, error) {
	p, ok := reusePolicies[flag]
	if !ok {
		return "", usagef("--id-reuse must be fail, allow-finished or terminate-running, not %q", flag)
	}
	return p, nil
}

func (c *cli) raiseCommand() *cobra.Command {
	var data, key string
	cmd := &cobra.Command{
		Use:     "raise INSTANCE EVENT",
		Short:   "Raise an external event on an instance",
		Example: `  duroxide raise expense-42 approval --data '{"approved": true, "by": "alice"}' --key approval-1`,
		Args:    args("INSTANCE", "EVENT"),
		RunE: func(cmd *cobra.Command, a []string) error {
			payload, err := jsonArg("--data", data)
			if err != nil {
				return err
			}
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			var opts []runtime.RaiseOption
			if key != "" {
				opts = append(opts, runtime.EventKey(key))
			}
			if err := c.client.RaiseEvent(cmd.Context(), a[0], a[1], payload, opts...); err != nil {
				return err
			}
			return c.print(map[string]string{"instance": a[0], "event": a[1]},
				func() { fmt.Fprintf(c.stdout, "raised %s on %s\n", a[1], a[0]) })
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "event data as JSON (default null)")
	cmd.Flags().StringVar(&key, "key", "", "idempotency key: the event is recorded once however often it is raised with this key")
	return cmd
}

func (c *cli) terminateCommand() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "terminate INSTANCE",
		Short: "Terminate a running instance and its sub-orchestrations",
		Args:  args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			if err := c.client.Terminate(cmd.Context(), a[0], reason); err != nil {
				return err
			}
			return c.print(map[string]string{"instance": a[0]}, func() { fmt.Fprintf(c.stdout, "termination of %s requested\n", a[0]) })
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "terminated with the duroxide CLI", "reason recorded in the instance's failure")
	return cmd
}

func (c *cli) cancelCommand() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "cancel INSTANCE",
		Short: "Ask a running instance to cancel: its code sees the cancellation and may clean up",
		Long: "Cancel requests a cooperative cancellation: the orchestration's context is cancelled, its pending\n" +
			"waits fail with the cancellation, and code that returns it ends Failed (kind Canceled). Code may\n" +
			"run compensations first. terminate is the hard stop.",
		Args: args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			if err := c.client.Cancel(cmd.Context(), a[0], reason); err != nil {
				return err
			}
			return c.print(map[string]string{"instance": a[0]}, func() { fmt.Fprintf(c.stdout, "cancellation of %s requested\n", a[0]) })
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "cancelled with the duroxide CLI", "reason the instance's code sees")
	return cmd
}

func (c *cli) waitCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait INSTANCE",
		Short: "Wait for an instance to finish and print its status (exit 1 unless it completed)",
		Args:  args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			return c.waitFor(cmd, a[0], timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long to wait")
	return cmd
}

func (c *cli) waitFor(cmd *cobra.Command, id string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
	defer cancel()
	if st, err := c.client.Status(ctx, id); err == nil && (st.Status == runtime.StatusPending || st.Stalled()) {
		fmt.Fprintf(cmd.ErrOrStderr(), "waiting for %s, %s\n", id, notProgressing(st))
	}
	st, err := c.client.Wait(ctx, id)
	if errors.Is(err, context.DeadlineExceeded) && st != nil && cmd.Context().Err() == nil {
		return &timeoutError{fmt.Sprintf("instance %s is still %s after %s", id, describeUnfinished(st), timeout)}
	}
	if err != nil {
		return err
	}
	if err := c.printStatus(st); err != nil {
		return err
	}
	if st.Status != runtime.StatusCompleted {
		return &failedError{fmt.Sprintf("instance %s ended %s", id, st.Status)}
	}
	return nil
}

// describeUnfinished says what an unfinished instance is doing.
func describeUnfinished(st *runtime.Status) string {
	if st.Status == runtime.StatusPending || st.Stalled() {
		return notProgressing(st)
	}
	return string(st.Status)
}

// notProgressing says why a pending or stalled instance makes no progress.
func notProgressing(st *runtime.Status) string {
	if st.Stalled() {
		return "Stalled: its last turn was handed back (" + st.LastError.Error() + ")"
	}
	return fmt.Sprintf("Pending since %s: no worker has run its first turn (is a worker that registers %s running?)",
		st.CreatedAt.UTC().Format(time.RFC3339), st.Orchestration)
}

func (c *cli) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status INSTANCE",
		Short: "Show an instance's status, output, failure, custom status, what it waits on and its children",
		Args:  args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			st, err := c.client.Status(cmd.Context(), a[0])
			if err != nil {
				return notFoundHint(err, a[0])
			}
			v := viewOf(st)
			if st.Status == runtime.StatusPending {
				return c.printView(v)
			}
			if !st.Finished() {
				events, err := c.provider.ReadHistory(cmd.Context(), provider.ExecutionRequest{Instance: a[0]})
				if err != nil {
					return fmt.Errorf("history of %s: %w", a[0], err)
				}
				v.WaitingOn = inspect.WaitingOn(events)
			}
			if v.Children, err = c.provider.ListChildren(cmd.Context(), provider.InstanceRequest{Instance: a[0]}); err != nil {
				return fmt.Errorf("children of %s: %w", a[0], err)
			}
			return c.printView(v)
		},
	}
}

func (c *cli) historyCommand() *cobra.Command {
	var execution int64
	var all, follow bool
	cmd := &cobra.Command{
		Use:   "history INSTANCE",
		Short: "Show the history of an instance's execution: what happened, when, and how long it took",
		Long: "history prints an execution's events with the time since the execution began, what each completion\n" +
			"answers (the activity's or child's name) and how long it took, and what each timer is for: the\n" +
			"code's own, a retry's backoff or an attempt's timeout. The current execution by default;\n" +
			"--execution N for another of a continue-as-new chain, --all-executions for every one.\n" +
			"--follow prints events as they are recorded, into each new execution, until the instance ends.\n" +
			"-o json of one execution is the file replay --file reads.",
		Args: args("INSTANCE"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if execution < 0 {
				return usagef("--execution must be positive (0: the current one), not %d", execution)
			}
			if all && execution != 0 {
				return usagef("--execution and --all-executions exclude each other")
			}
			if follow && (all || execution != 0 || c.output == "json") {
				return usagef("--follow shows the current execution on, as text: not with --execution, --all-executions or -o json")
			}
			if err := c.open(cmd.Context()); err != nil {
				return err
			}
			if follow {
				return c.followHistory(cmd.Context(), a[0])
			}
			if all {
				return c.printAllExecutions(cmd.Context(), a[0])
			}
			events, err := c.provider.ReadHistory(cmd.Context(), provider.ExecutionRequest{Instance: a[0], ExecutionID: execution})
			if err != nil {
				return fmt.Errorf("history of %s: %w", a[0], err)
			}
			if len(events) == 0 {
				return notFoundHint(fmt.Errorf("history of %s: %w", a[0], provider.ErrNotFound), a[0])
			}
			return c.print(historyFile{Instance: a[0], Events: events}, func() { printHistory(c.stdout, events) })
		},
	}
	cmd.Flags().Int64Var(&execution, "execution", 0, "the execution to show (0: the current one)")
	cmd.Flags().BoolVar(&all, "all-executions", false, "every execution of a continue-as-new chain, oldest first")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "print events as they are recorded until the instance ends")
	return cmd
}

// executionHistory is one execution's events, for history --all-executions.
type executionHistory struct {
	ExecutionID int64            `json:"executionId"`
	Events      []provider.Event `json:"events"`
}

func (c *cli) printAllExecutions(ctx context.Context, id string) error {
	ids, err := c.provider.ListExecutions(ctx, provider.InstanceRequest{Instance: id})
	if err != nil {
		return fmt.Errorf("executions of %s: %w", id, err)
	}
	if len(ids) == 0 {
		return notFoundHint(fmt.Errorf("history of %s: %w", id, provider.ErrNotFound), id)
	}
	all := make([]executionHistory, 0, len(ids))
	for _, e := range ids {
		events, err := c.provider.ReadHistory(ctx, provider.ExecutionRequest{Instance: id, ExecutionID: e})
		if err != nil {
			return fmt.Errorf("history of %s, execution %d: %w", id, e, err)
		}
		all = append(all, executionHistory{ExecutionID: e, Events: events})
	}
	return c.print(struct {
		Instance   string             `json:"instance"`
		Executions []executionHistory `json:"executions"`
	}{id, all}, func() {
		for i, e := range all {
			if i > 0 {
				fmt.Fprintln(c.stdout)
			}
			fmt.Fprintf(c.stdout, "execution %d\n", e.ExecutionID)
			printHistory(c.stdout, e.Events)
		}
	})
}

// jsonArg checks a JSON flag value; empty means null.
func jsonArg(flag, value string) (json.RawMessage, error) {
	if value == "" {
		return json.RawMessage("null"), nil
	}
	if !json.Valid([]byte(value)) {
		return nil, usagef("%s is not valid JSON: %q (strings need quotes: '\"text\"')", flag, value)
	}
	return json.RawMessage(value), nil
}

func newInstanceID(orchestration string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return orchestration + "-" + hex.EncodeToString(b)
}
