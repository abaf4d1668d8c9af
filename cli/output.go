package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/duroxide/duroxide-go/internal/inspect"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// print writes v as JSON with -o json, else calls text.
func (c *cli) print(v any, text func()) error {
	if c.output == "json" {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
		return nil
	}
	text()
	return nil
}

// statusView is an instance's status as the CLI prints it; payloads stay JSON.
type statusView struct {
	Instance      string           `json:"instance"`
	Orchestration string           `json:"orchestration"`
	Version       string           `json:"version,omitempty"`
	ExecutionID   int64            `json:"executionId"`
	Status        string           `json:"status"`
	Output        json.RawMessage  `json:"output,omitempty"`
	Failure       *runtime.Failure `json:"failure,omitempty"`
	LastError     *runtime.Failure `json:"lastError,omitempty"`
	CustomStatus  json.RawMessage  `json:"customStatus,omitempty"`
	Parent        string           `json:"parent,omitempty"`
	CreatedAt     time.Time        `json:"createdAt"`
	UpdatedAt     time.Time        `json:"updatedAt"`
	// WaitingOn and Children are filled in by status (not by wait or start).
	WaitingOn []inspect.Pending `json:"waitingOn,omitempty"`
	Children  []string          `json:"children,omitempty"`
}

func viewOf(st *runtime.Status) statusView {
	v := statusView{Instance: st.Instance, Orchestration: st.Orchestration, Version: st.Version,
		ExecutionID: st.ExecutionID, Status: string(st.Status), Failure: st.Failure, LastError: st.LastError, Parent: st.ParentInstance,
		CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt}
	v.Output = rawJSON(st.Output)
	if st.CustomStatus != nil {
		v.CustomStatus = rawJSON(*st.CustomStatus)
	}
	return v
}

// rawJSON keeps a stored payload as JSON, or quotes it if it is not JSON, so
// that -o json always prints a valid document.
func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func (c *cli) printStatus(st *runtime.Status) error {
	return c.printView(viewOf(st))
}

func (c *cli) printView(v statusView) error {
	return c.print(v, func() {
		w := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		line := func(k, val string) {
			if val != "" {
				fmt.Fprintf(w, "%s:\t%s\n", k, val)
			}
		}
		line("instance", v.Instance)
		line("orchestration", v.Orchestration)
		line("version", v.Version)
		line("status", v.Status)
		line("execution", fmt.Sprint(v.ExecutionID))
		line("output", string(v.Output))
		if v.Failure != nil {
			line("failure", v.Failure.Error())
		}
		if v.LastError != nil {
			line("stalled", "retrying after: "+v.LastError.Error())
		}
		line("custom status", string(v.CustomStatus))
		line("parent", v.Parent)
		line("created", v.CreatedAt.UTC().Format(time.RFC3339))
		line("updated", v.UpdatedAt.UTC().Format(time.RFC3339))
		now := time.Now()
		for i, p := range v.WaitingOn {
			key := ""
			if i == 0 {
				key = "waiting on:"
			}
			fmt.Fprintf(w, "%s\t%s\n", key, p.Describe(now))
		}
		if len(v.Children) > 0 {
			line("children", fmt.Sprintf("%d: %s", len(v.Children), strings.Join(firstOf(v.Children, 5), ", ")))
		}
		_ = w.Flush()
	})
}

func printHistory(out io.Writer, events []provider.Event) {
	printHistoryFrom(out, events, 0, true)
}

// printHistoryFrom prints events[from:], in the context of all of them
// (names, durations and times refer to earlier events), with the header
// when header is set.
func printHistoryFrom(out io.Writer, events []provider.Event, from int, header bool) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if header {
		fmt.Fprintln(w, "TIME\tID\tKIND\tNAME\tSOURCE\tTOOK\tDETAIL")
	}
	byID := make(map[int64]provider.Event, len(events))
	var start int64
	for _, e := range events {
		byID[e.ID] = e
		if start == 0 {
			start = e.Time
		}
	}
	for _, e := range events[from:] {
		source, name, took := "", e.Name, ""
		if e.SourceID != 0 {
			source = fmt.Sprint(e.SourceID)
			if s, ok := byID[e.SourceID]; ok {
				if name == "" {
					name = s.Name
				}
				if inspect.IsCompletion(e.Kind) && e.Time != 0 && s.Time != 0 {
					took = inspect.ShortDuration(time.Duration(e.Time-s.Time) * time.Millisecond)
				}
			}
		}
		if e.Kind == provider.EventTimerCreated || e.Kind == provider.EventTimerFired {
			name = timerName(e, byID)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", sinceStart(e.Time, start), e.ID, e.Kind, name, source, took, inspect.Detail(e, 80))
	}
	_ = w.Flush()
}

// sinceStart is t's offset from the execution's first event, "" when the
// event has no time (recorded by an older version).
func sinceStart(t, start int64) string {
	if t == 0 || start == 0 {
		return ""
	}
	return "+" + inspect.ShortDuration(time.Duration(t-start)*time.Millisecond)
}

// firstOf is the first n of s, with "…" when there are more.
func firstOf(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], "…")
}

// notFoundHint explains the one surprising not-found: an instance exists only
// once a worker has run its first turn.
func notFoundHint(err error, id string) error {
	if errors.Is(err, provider.ErrNotFound) {
		return fmt.Errorf("instance %s not found (a started instance appears once a worker runs its first turn): %w", id, err)
	}
	return err
}

// timerName labels a TimerCreated, or the TimerFired that answers it, by
// the timer's purpose.
func timerName(e provider.Event, byID map[int64]provider.Event) string {
	if e.Kind == provider.EventTimerFired {
		e = byID[e.SourceID]
	}
	return inspect.TimerPurpose(e)
}
