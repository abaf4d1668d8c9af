package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

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
	v := viewOf(st)
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
		_ = w.Flush()
	})
}

func printHistory(out io.Writer, events []provider.Event) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tKIND\tNAME\tSOURCE\tDETAIL")
	for _, e := range events {
		source := ""
		if e.SourceID != 0 {
			source = fmt.Sprint(e.SourceID)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\n", e.ID, e.Kind, e.Name, source, eventDetail(e))
	}
	_ = w.Flush()
}

// eventDetail is the one payload that says most about an event, shortened.
func eventDetail(e provider.Event) string {
	var d string
	switch {
	case e.Error != nil:
		d = string(e.Error.Class) + ": " + e.Error.Message
	case e.Kind == provider.EventTimerCreated && e.FireAt != 0:
		d = "fires " + time.UnixMilli(e.FireAt).UTC().Format(time.RFC3339)
	case e.Reason != "":
		d = e.Reason
	case e.Output != "":
		d = "-> " + e.Output
	case e.Input != "":
		d = e.Input
	}
	if e.Instance != "" {
		d = "instance " + e.Instance + " " + d
	}
	const limit = 80
	if r := []rune(d); len(r) > limit {
		d = string(r[:limit-1]) + "…"
	}
	return d
}

// notFoundHint explains the one surprising not-found: an instance exists only
// once a worker has run its first turn.
func notFoundHint(err error, id string) error {
	if errors.Is(err, provider.ErrNotFound) {
		return fmt.Errorf("instance %s not found (a started instance appears once a worker runs its first turn): %w", id, err)
	}
	return err
}
