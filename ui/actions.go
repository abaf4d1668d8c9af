package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// An action the view can take on an instance, with what its confirmation
// page asks for.
type action struct {
	Name, Verb, Explain string
	// Event and Reason say which fields the form has.
	Event, Reason bool
	do            func(ctx context.Context, c *runtime.Client, id string, form url.Values) (string, error)
}

var actionList = []action{
	{Name: "raise", Verb: "Raise event", Event: true,
		Explain: "Deliver an external event; the orchestration receives it where it waits for that name.",
		do: func(ctx context.Context, c *runtime.Client, id string, f url.Values) (string, error) {
			name, data := strings.TrimSpace(f.Get("event")), strings.TrimSpace(f.Get("data"))
			if name == "" {
				return "", badRequestf("the event needs a name")
			}
			if data == "" {
				data = "null"
			}
			if !json.Valid([]byte(data)) {
				return "", badRequestf("the event's data is not JSON: %.60q", data)
			}
			return "event " + name + " raised", c.RaiseEvent(ctx, id, name, json.RawMessage(data))
		}},
	{Name: "cancel", Verb: "Cancel", Reason: true,
		Explain: "Ask the orchestration to stop: its code sees the cancellation and may clean up before it ends.",
		do: func(ctx context.Context, c *runtime.Client, id string, f url.Values) (string, error) {
			return "cancellation requested", c.Cancel(ctx, id, f.Get("reason"))
		}},
	{Name: "terminate", Verb: "Terminate", Reason: true,
		Explain: "End the instance now, without running its code: in-flight activities are cancelled and sub-orchestrations terminated.",
		do: func(ctx context.Context, c *runtime.Client, id string, f url.Values) (string, error) {
			return "termination requested", c.Terminate(ctx, id, f.Get("reason"))
		}},
	{Name: "rewind", Verb: "Rewind",
		Explain: "Run this failed instance again as a new execution that starts from before its failing step: what completed before it is replayed, not run again. Do it once the cause is fixed. The failed execution keeps its history.",
		do: func(ctx context.Context, c *runtime.Client, id string, _ url.Values) (string, error) {
			r, err := c.Rewind(ctx, id)
			return rewound(r), err
		}},
	{Name: "retry", Verb: "Retry",
		Explain: "Run this failed instance again from its input as a new execution: every step runs again. The failed execution keeps its history.",
		do: func(ctx context.Context, c *runtime.Client, id string, _ url.Values) (string, error) {
			r, err := c.Rewind(ctx, id, runtime.RewindToStart())
			return rewound(r), err
		}},
	{Name: "delete", Verb: "Delete",
		Explain: "Remove this finished instance, its sub-orchestrations and all their history. This cannot be undone.",
		do: func(ctx context.Context, c *runtime.Client, id string, _ url.Values) (string, error) {
			r, err := c.Delete(ctx, id, false)
			return fmt.Sprintf("deleted %d instances and %d history events", r.InstancesDeleted, r.EventsDeleted), err
		}},
}

func actionNamed(name string) (action, bool) {
	i := slices.IndexFunc(actionList, func(a action) bool { return a.Name == name })
	if i < 0 {
		return action{}, false
	}
	return actionList[i], true
}

// availableActions names what can be done to an instance in st's state.
func availableActions(st *runtime.Status) []string {
	switch {
	case st.Status == runtime.StatusFailed && st.ParentInstance == "":
		return []string{"rewind", "retry", "delete"}
	case st.Finished():
		return []string{"delete"}
	}
	return []string{"raise", "cancel", "terminate"}
}

// rewound says what a rewind queued.
func rewound(r runtime.RewindResult) string {
	from := "from its start"
	if r.Step != "" {
		from = "from before " + r.Step
	}
	return fmt.Sprintf("execution %d runs %s (%d events kept, %d run again)", r.Execution, from, r.Kept, r.Dropped)
}

type confirmData struct {
	Title  string
	Action action
	Status *runtime.Status
	Shown  string
	// Error is why the last try was refused, shown above the form.
	Error          string
	Event, Data    string
	Reason, Cancel string
}

// confirmPage asks before an action is taken; only its form posts it.
func (s *server) confirmPage(w http.ResponseWriter, r *http.Request) {
	a, st, err := s.actionRequest(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, http.StatusOK, "confirm", s.confirmData(a, st, ""))
}

func (s *server) confirmData(a action, st *runtime.Status, problem string) confirmData {
	d := confirmData{Title: a.Verb + " " + st.Instance, Action: a, Status: st, Shown: string(st.Status), Error: problem,
		Cancel: s.instanceURL(st.Instance, 0)}
	if st.Stalled() {
		d.Shown = string(provider.StatusStalled)
	}
	return d
}

// act takes a confirmed action and goes back to the instance (to the list
// after a delete), saying what was done.
func (s *server) act(w http.ResponseWriter, r *http.Request) {
	a, st, err := s.actionRequest(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	done, err := a.do(r.Context(), s.client, st.Instance, r.PostForm)
	if err != nil {
		d := s.confirmData(a, st, err.Error())
		d.Event, d.Data, d.Reason = r.PostForm.Get("event"), r.PostForm.Get("data"), r.PostForm.Get("reason")
		s.render(w, statusOf(err), "confirm", d)
		return
	}
	target := s.instanceURL(st.Instance, 0) + "&done=" + url.QueryEscape(done)
	if a.Name == "delete" {
		target = s.opts.Prefix + "/instances?done=" + url.QueryEscape(st.Instance+": "+done)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// actionRequest checks that actions are on, the action exists and applies
// to the instance as it is now.
func (s *server) actionRequest(r *http.Request) (action, *runtime.Status, error) {
	if !s.opts.Actions {
		return action{}, nil, errReadOnly
	}
	a, ok := actionNamed(r.PathValue("action"))
	if !ok {
		return action{}, nil, badRequestf("no action %q (there are raise, cancel, terminate, rewind, retry and delete)", r.PathValue("action"))
	}
	if err := r.ParseForm(); err != nil {
		return action{}, nil, badRequestf("read the form: %v", err)
	}
	id := r.Form.Get("id")
	if id == "" {
		return action{}, nil, badRequestf("which instance? the action needs an id")
	}
	st, err := s.client.Status(r.Context(), id)
	if err != nil {
		return action{}, nil, fmt.Errorf("instance %s: %w", id, err)
	}
	if !slices.Contains(availableActions(st), a.Name) {
		return action{}, nil, badRequestf("cannot %s instance %s: it is %s", a.Name, id, st.Status)
	}
	return a, st, nil
}

// statusOf is the HTTP status of a refused action.
func statusOf(err error) int {
	var bad *badRequest
	switch {
	case errors.As(err, &bad):
		return http.StatusBadRequest
	case errors.Is(err, provider.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, provider.ErrInstanceFinished), errors.Is(err, provider.ErrNotRewindable):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}
