package providertest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func listingCases() []Case {
	return []Case{
		{Name: "ListPagesNewestFirstByKeyset", Run: listPagesNewestFirst},
		{Name: "ListFilters", Run: listFilters},
		{Name: "ListPendingAndStalled", Run: listPendingAndStalled},
		{Name: "ListRefusesBadRequests", Run: listRefusesBadRequests},
	}
}

// listIDs lists every page of req and returns the IDs in order (nil for none).
func (e *env) listIDs(req provider.ListRequest) []string {
	e.t.Helper()
	var ids []string
	for _, info := range e.listAll(req) {
		ids = append(ids, info.Instance)
	}
	return ids
}

// listAll follows req's pages to the end.
func (e *env) listAll(req provider.ListRequest) []provider.InstanceInfo {
	e.t.Helper()
	var all []provider.InstanceInfo
	for pages := 0; ; pages++ {
		if pages > 1000 {
			e.t.Fatal("list instances: more than 1000 pages; Next never ends")
		}
		page, err := e.a.ListInstances(e.ctx, req)
		e.must(err, "list instances")
		all = append(all, page.Instances...)
		if page.Next == "" {
			return all
		}
		req.After = page.Next
	}
}

// createNamed creates instance as an instance of the orchestration name.
func (e *env) createNamed(instance, name string) {
	e.t.Helper()
	start := startItem(instance)
	start.Name = name
	e.enqueue(start)
	item := e.fetchInstance(instance)
	e.ack(item, firstTurn(item))
}

// newestFirst reports whether infos are in ListInstances' order: creation
// time, then ID, descending.
func newestFirst(infos []provider.InstanceInfo) bool {
	return slices.IsSortedFunc(infos, func(a, b provider.InstanceInfo) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.Instance, a.Instance)
	})
}

// Pages of 3 cover 7 instances once each, newest first, and the last page
// says there is no next; an instance created between two pages is not in
// the later page (it sorts before the cursor) and shifts nothing.
func listPagesNewestFirst(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, id := range []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7"} {
		e.create(id)
	}
	first, err := e.a.ListInstances(e.ctx, provider.ListRequest{Limit: 3})
	e.must(err, "first page")
	e.wantEqual(len(first.Instances), 3, "first page size")
	if first.Next == "" {
		t.Fatal("first page of 7 has no Next")
	}
	e.create("i8")
	rest := e.listAll(provider.ListRequest{Limit: 3, After: first.Next})
	all := append(slices.Clone(first.Instances), rest...)
	ids := make([]string, len(all))
	for i, info := range all {
		ids[i] = info.Instance
	}
	e.wantEqual(len(all), 7, "instances over all pages (i8 came after the first page)")
	e.wantEqual(newestFirst(all), true, "pages in newest-first order "+strings.Join(ids, ","))
	e.wantEqual(slices.Contains(ids, "i8"), false, "i8, created after the first page, in a later page")
	slices.Sort(ids)
	e.wantEqual(len(slices.Compact(ids)), 7, "distinct instances")
	whole, err := e.a.ListInstances(e.ctx, provider.ListRequest{})
	e.must(err, "one page of all")
	e.wantEqual(len(whole.Instances), 8, "a default page")
	e.wantEqual(whole.Next, "", "Next of the last page")
	e.wantEqual(whole.Instances[0].Instance == "i8" || whole.Instances[0].CreatedAt.Equal(whole.Instances[1].CreatedAt), true,
		"the newest first")
	e.wantEqual(whole.Instances[0].OrchestrationName, orchName, "a listed instance's orchestration")
}

func listFilters(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a-1")
	e.createNamed("a-2", "Other")
	e.create("b-1")
	e.wantEqual(e.listIDs(provider.ListRequest{Orchestration: "Other"}), []string{"a-2"}, "by orchestration")
	byPrefix := e.listIDs(provider.ListRequest{IDPrefix: "a-"})
	slices.Sort(byPrefix)
	e.wantEqual(byPrefix, []string{"a-1", "a-2"}, "by ID prefix")
	e.wantEqual(e.listIDs(provider.ListRequest{IDPrefix: "a-", Orchestration: orchName}), []string{"a-1"}, "prefix and orchestration")
	e.wantEqual(e.listIDs(provider.ListRequest{Instance: "a-"}), []string(nil), "an ID that is only a prefix")
	e.wantEqual(e.listIDs(provider.ListRequest{Instance: "a-2"}), []string{"a-2"}, "by ID")
	all := e.listAll(provider.ListRequest{})
	oldest := all[len(all)-1]
	e.wantEqual(len(e.listIDs(provider.ListRequest{CreatedAfter: oldest.CreatedAt})), 3, "created at or after the oldest")
	before := e.listIDs(provider.ListRequest{CreatedBefore: oldest.CreatedAt})
	e.wantEqual(len(before), 0, "created before the oldest")
	later := e.listIDs(provider.ListRequest{CreatedAfter: time.Now().Add(time.Hour)})
	e.wantEqual(len(later), 0, "created after an hour from now")

	// The last change: a-1 finishes after the others last changed.
	time.Sleep(5 * time.Millisecond)
	e.finish("a-1", provider.StatusCompleted, `1`)
	changed := e.info("a-1").UpdatedAt
	e.wantEqual(e.listIDs(provider.ListRequest{UpdatedAfter: changed}), []string{"a-1"}, "updated at or after a-1's end")
	e.wantEqual(len(e.listIDs(provider.ListRequest{UpdatedBefore: changed})), 2, "updated before a-1's end")
	_, err := e.a.ListInstances(e.ctx, provider.ListRequest{UpdatedAfter: changed, UpdatedBefore: changed})
	e.wantErr(err, provider.ErrInvalidArgument, "an empty updated range")
}

// A queued start is listed as Pending with its orchestration; a running
// instance whose turn was handed back with a cause is Stalled (a filter),
// and still Running with its LastError.
func listPendingAndStalled(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("ok")
	e.create("stuck")
	e.enqueue(externalItem("stuck", "nudge"))
	held := e.fetchInstance("stuck")
	cause := &provider.ErrorDetails{Class: provider.ErrorConfiguration, Message: "nondeterministic"}
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: held.LockToken, Delay: time.Hour, Cause: cause}), "abandon with a cause")
	e.enqueue(startItem("queued"))

	pending := e.listAll(provider.ListRequest{Status: provider.StatusPending})
	e.wantEqual(len(pending), 1, "pending instances")
	e.wantEqual(pending[0].Instance, "queued", "the pending instance")
	e.wantEqual(pending[0].OrchestrationName, orchName, "a pending instance's orchestration")
	e.wantEqual(pending[0].CreatedAt.IsZero(), false, "a pending instance's enqueue time")
	e.wantEqual(e.listIDs(provider.ListRequest{Instance: "queued"}), []string{"queued"}, "a pending instance by ID")
	stalled := e.listAll(provider.ListRequest{Status: provider.StatusStalled})
	e.wantEqual(len(stalled), 1, "stalled instances")
	e.wantEqual(stalled[0].Instance, "stuck", "the stalled instance")
	e.wantEqual(stalled[0].Status, provider.StatusRunning, "a stalled instance's status")
	e.wantEqual(stalled[0].LastError != nil && stalled[0].LastError.Message == "nondeterministic", true, "a stalled instance's last error")
	running := e.listIDs(provider.ListRequest{Status: provider.StatusRunning})
	slices.Sort(running)
	e.wantEqual(running, []string{"ok", "stuck"}, "running instances")
	e.wantEqual(len(e.listIDs(provider.ListRequest{})), 3, "all, pending included")
}

func listRefusesBadRequests(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	now := time.Now()
	for name, req := range map[string]provider.ListRequest{
		"negative limit":     {Limit: -1},
		"limit over the max": {Limit: provider.MaxListLimit + 1},
		"unknown status":     {Status: "Sleeping"},
		"foreign cursor":     {After: "not-a-cursor"},
		"empty time range":   {CreatedAfter: now, CreatedBefore: now.Add(-time.Minute)},
	} {
		if _, err := e.a.ListInstances(e.ctx, req); !errors.Is(err, provider.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
}
