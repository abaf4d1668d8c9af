package ui

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/duroxide/duroxide-go/internal/inspect"
	"github.com/duroxide/duroxide-go/provider"
)

// statuses are the list filter's choices, in the order the form offers them.
var statuses = []provider.ExecutionStatus{
	provider.StatusPending, provider.StatusRunning, provider.StatusStalled, provider.StatusCompleted,
	provider.StatusFailed, provider.StatusTerminated, provider.StatusContinuedAsNew,
}

type listData struct {
	Title    string
	Filter   listFilter
	Statuses []provider.ExecutionStatus
	Rows     []listRow
	// Next is the URL of the next page, "" on the last.
	Next string
	// Done says what the action just taken did.
	Done string
}

// listFilter is the form as the user filled it in, shown back to them.
type listFilter struct {
	Status, Orchestration, Prefix string
	Since, Before                 string // created
	UpdatedSince, UpdatedBefore   string
	Limit                         int
}

type listRow struct {
	Instance, Orchestration, Status string
	Execution                       int64
	CreatedAt, UpdatedAt            time.Time
	Problem                         string // why a stalled instance is stuck
}

func (s *server) listPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := listFilter{Status: q.Get("status"), Orchestration: q.Get("orchestration"), Prefix: q.Get("prefix"),
		Since: q.Get("since"), Before: q.Get("before"), UpdatedSince: q.Get("updated_since"), UpdatedBefore: q.Get("updated_before")}
	req, err := listRequest(f, q.Get("limit"), q.Get("after"))
	if err != nil {
		s.fail(w, err)
		return
	}
	f.Limit = req.PageSize()
	page, err := s.client.List(r.Context(), req)
	if err != nil {
		s.fail(w, err)
		return
	}
	data := listData{Title: "Instances", Filter: f, Statuses: statuses, Done: q.Get("done")}
	for _, i := range page.Instances {
		data.Rows = append(data.Rows, rowOf(i))
	}
	if page.Next != "" {
		next := r.URL.Query()
		next.Set("after", page.Next)
		next.Del("done")
		data.Next = s.opts.Prefix + "/instances?" + next.Encode()
	}
	s.render(w, http.StatusOK, "list", data)
}

// rowOf is an instance as a list shows it; a stalled one says why.
func rowOf(i provider.InstanceInfo) listRow {
	row := listRow{Instance: i.Instance, Orchestration: i.OrchestrationName, Status: inspect.ShownStatus(i),
		Execution: i.CurrentExecutionID, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt}
	if i.LastError != nil && row.Status == string(provider.StatusStalled) {
		row.Problem = i.LastError.Message
	}
	return row
}

// listRequest turns the form into a store request; bad values are a 400
// that names the field.
func listRequest(f listFilter, limit, after string) (provider.ListRequest, error) {
	req := provider.ListRequest{Status: provider.ExecutionStatus(f.Status), Orchestration: f.Orchestration,
		IDPrefix: f.Prefix, After: after}
	for _, field := range []struct {
		name, value string
		into        *time.Time
	}{
		{"since", f.Since, &req.CreatedAfter}, {"before", f.Before, &req.CreatedBefore},
		{"updated since", f.UpdatedSince, &req.UpdatedAfter}, {"updated before", f.UpdatedBefore, &req.UpdatedBefore},
	} {
		t, err := formTime(field.name, field.value)
		if err != nil {
			return req, err
		}
		*field.into = t
	}
	var err error
	if limit != "" {
		if req.Limit, err = strconv.Atoi(limit); err != nil {
			return req, badRequestf("limit %q is not a number", limit)
		}
	}
	if err := req.Validate(); err != nil {
		return req, badRequestf("%v", err)
	}
	return req, nil
}

// formTime reads a time field: RFC 3339, or a datetime-local input's
// value, which the form labels UTC.
func formTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, badRequestf("%s %q is not a time (2006-01-02T15:04, in UTC, or RFC 3339)", field, v)
}

// instanceURL links to an instance's page (execution 0: the current one).
func (s *server) instanceURL(id string, execution int64) string {
	q := url.Values{"id": {id}}
	if execution != 0 {
		q.Set("execution", strconv.FormatInt(execution, 10))
	}
	return s.opts.Prefix + "/instance?" + q.Encode()
}
