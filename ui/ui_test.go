package ui

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

// get fetches path and returns its status and body.
func get(t *testing.T, f *fixture, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(f.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// post submits form to path as the page's own form would, without
// following redirects.
func post(t *testing.T, f *fixture, path string, form url.Values, origin string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp
}

var instanceLink = regexp.MustCompile(`href="/instance\?id=([^"]+)"`)

// listed is the instance IDs a list page links to, in order.
func listed(body string) []string {
	var ids []string
	for _, m := range instanceLink.FindAllStringSubmatch(body, -1) {
		id, _ := url.QueryUnescape(m[1])
		ids = append(ids, id)
	}
	return ids
}

func TestListFiltersPagesAndRefusesBadInput(t *testing.T) {
	f := newFixture(t, Options{})
	for _, id := range []string{"h-1", "h-2", "h-3"} {
		f.start(t, id, "Hello", id, true)
	}
	if err := f.client.Start(t.Context(), "nobody-runs-it", "NoSuchOrchestration", nil); err != nil {
		t.Fatal(err)
	}
	f.stall(t, "drift-1")

	code, body := get(t, f, "/instances?prefix=h-&limit=2")
	if got := strings.Join(listed(body), ","); code != 200 || got != "h-3,h-2" {
		t.Fatalf("first page: %d %s, want h-3,h-2 (newest first)", code, got)
	}
	next := regexp.MustCompile(`id="next" href="([^"]+)"`).FindStringSubmatch(body)
	if next == nil {
		t.Fatal("first page has no next link")
	}
	code, body = get(t, f, strings.ReplaceAll(next[1], "&amp;", "&"))
	if got := strings.Join(listed(body), ","); code != 200 || got != "h-1" || strings.Contains(body, `id="next"`) {
		t.Errorf("second page: %d %s (next link: %v), want h-1 and no next", code, got, strings.Contains(body, `id="next"`))
	}
	for status, want := range map[string]string{"Stalled": "drift-1", "Pending": "nobody-runs-it"} {
		code, body = get(t, f, "/instances?status="+status)
		if got := strings.Join(listed(body), ","); code != 200 || got != want || !strings.Contains(body, `class="status `+strings.ToLower(status)+`"`) {
			t.Errorf("status %s: %d %s, want %s marked %s", status, code, got, want, status)
		}
	}
	for query, want := range map[string]string{
		"limit=-1":          "limit",
		"limit=ten":         `limit &#34;ten&#34; is not a number`,
		"since=yesterday":   `since &#34;yesterday&#34; is not a time`,
		"status=Sleeping":   "Sleeping",
		"after=not-a-token": "cursor",
	} {
		code, body = get(t, f, "/instances?"+query)
		if code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("?%s: %d, want 400 saying %q; page: %s", query, code, want, errorText(body))
		}
	}
	if code, body = get(t, f, "/instances?orchestration=Hello&since="+url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04"))); code != 200 || len(listed(body)) != 3 {
		t.Errorf("Hello created in the last hour: %d %v, want the three", code, listed(body))
	}
	h3, _ := f.client.Status(t.Context(), "h-3")
	if code, body = get(t, f, "/instances?prefix=h-&updated_since="+url.QueryEscape(h3.UpdatedAt.Format(time.RFC3339Nano))); code != 200 || strings.Join(listed(body), ",") != "h-3" {
		t.Errorf("h- updated since h-3's last change: %d %v, want h-3", code, listed(body))
	}
	if code, body = get(t, f, "/instances?updated_before=soon"); code != http.StatusBadRequest || !strings.Contains(errorText(body), "updated before") {
		t.Errorf("bad updated_before: %d %s", code, errorText(body))
	}
}

var errorPara = regexp.MustCompile(`id="error">([^<]*)<`)

func errorText(body string) string {
	if m := errorPara.FindStringSubmatch(body); m != nil {
		return m[1]
	}
	return "(no error shown)"
}

// The retry sample's page: three attempts, the first two failed, with the
// backoff timers between them labelled.
func TestInstancePageOfRetries(t *testing.T) {
	f := newFixture(t, Options{})
	// FlakyCharge counts its calls per instance ID in the process.
	id := fmt.Sprintf("retry-%d", time.Now().UnixNano())
	st := f.start(t, id, "Retry", "payment-1", true)
	if st.Status != runtime.StatusCompleted {
		t.Fatalf("retry sample: %+v", st)
	}
	code, body := get(t, f, "/instance?id="+id)
	if code != 200 {
		t.Fatalf("instance page: %d %s", code, errorText(body))
	}
	for want, n := range map[string]int{
		`class="bar activity failed"`:                  2,
		`class="bar activity completed"`:               1,
		`class="bar timer completed"`:                  2,
		`<text class="row" x="4"`:                      2, // FlakyCharge, retry backoff
		`>retry backoff<`:                              1,
		"retry backoff of FlakyCharge after attempt 1": 2, // the history's detail and the bar's tooltip
	} {
		if got := strings.Count(body, want); got < n {
			t.Errorf("page has %d × %s, want %d", got, want, n)
		}
	}
	for _, want := range []string{`id="status">Completed<`, "charged payment-1 on attempt 3", `&#34;payment-1&#34;`, "FlakyCharge"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if code, body := get(t, f, "/instance?id=no-such"); code != http.StatusNotFound || !strings.Contains(errorText(body), "no-such") {
		t.Errorf("unknown instance: %d %s, want 404 naming it", code, errorText(body))
	}
	if code, _ := get(t, f, "/instance?id="+id+"&execution=zero"); code != http.StatusBadRequest {
		t.Errorf("bad execution: %d, want 400", code)
	}
}

// A pending instance has a page: its orchestration, no history yet.
func TestInstancePageOfPending(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.client.Start(t.Context(), "later", "NoSuchOrchestration", "x"); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, f, "/instance?id=later")
	for _, want := range []string{`id="status">Pending<`, "NoSuchOrchestration", "No history yet"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("pending instance page: %d, lacks %q", code, want)
		}
	}
}

func TestReadOnlyRefusesActions(t *testing.T) {
	f := newFixture(t, Options{})
	f.start(t, "a-1", "Approval", samples.ApprovalRequest{Item: "desk", Timeout: time.Hour}, false)
	if _, body := get(t, f, "/instance?id=a-1"); strings.Contains(body, `class="button"`) || !strings.Contains(body, "read-only") {
		t.Error("a read-only view offers actions")
	}
	if code, body := get(t, f, "/instance/cancel?id=a-1"); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("confirmation page when read-only: %d", code)
	}
	if resp := post(t, f, "/instance/terminate", url.Values{"id": {"a-1"}}, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("terminate when read-only: %d, want 403", resp.StatusCode)
	}
	if st, _ := f.client.Status(t.Context(), "a-1"); st.Status != runtime.StatusRunning {
		t.Errorf("a-1 is %s after refused actions", st.Status)
	}
}

func TestActionsConfirmAndAct(t *testing.T) {
	f := newFixture(t, Options{Actions: true})
	f.start(t, "a-1", "Approval", samples.ApprovalRequest{Item: "desk", Timeout: time.Hour}, false)
	_, body := get(t, f, "/instance?id=a-1")
	for _, a := range []string{"raise", "cancel", "terminate"} {
		if !strings.Contains(body, `href="/instance/`+a+`?id=a-1"`) {
			t.Errorf("running instance's page lacks the %s action", a)
		}
	}
	if code, body := get(t, f, "/instance/raise?id=a-1"); code != 200 || !strings.Contains(body, `id="confirm"`) {
		t.Fatalf("raise confirmation: %d %s", code, errorText(body))
	}
	if resp := post(t, f, "/instance/raise", url.Values{"id": {"a-1"}, "event": {"approval"}, "data": {"{not json"}}, ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("raise with bad JSON: %d, want 400", resp.StatusCode)
	}
	form := url.Values{"id": {"a-1"}, "event": {"approval"}, "data": {`{"approved": true, "by": "ui"}`}}
	if resp := post(t, f, "/instance/raise", form, "http://elsewhere.example"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin raise: %d, want 403", resp.StatusCode)
	}
	resp := post(t, f, "/instance/raise", form, "")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "done=event+approval+raised") {
		t.Fatalf("raise: %d to %q", resp.StatusCode, loc)
	}
	st := f.waitUntil(t, "a-1", (*runtime.Status).Finished)
	if st.Output != `"desk: approved by ui"` {
		t.Errorf("output %s, want the raised decision's", st.Output)
	}
	if resp := post(t, f, "/instance/terminate", url.Values{"id": {"a-1"}}, ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("terminate of a finished instance: %d, want 400", resp.StatusCode)
	}
	if resp := post(t, f, "/instance/explode", url.Values{"id": {"a-1"}}, ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown action: %d, want 400", resp.StatusCode)
	}
	resp = post(t, f, "/instance/delete", url.Values{"id": {"a-1"}}, "")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/instances?done=") {
		t.Fatalf("delete: %d to %q", resp.StatusCode, loc)
	}
	if code, _ := get(t, f, "/instance?id=a-1"); code != http.StatusNotFound {
		t.Errorf("deleted instance's page: %d, want 404", code)
	}
}

func TestStorePage(t *testing.T) {
	f := newFixture(t, Options{})
	f.start(t, "h-1", "Hello", "x", true)
	f.stall(t, "drift-1")
	if err := f.client.Start(t.Context(), "nobody-runs-it", "NoSuchOrchestration", nil); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, f, "/store")
	if code != 200 {
		t.Fatalf("store page: %d %s", code, errorText(body))
	}
	for _, want := range []string{`<b>2</b> instances`, `<b>1</b> stalled`, `<b>1</b> pending starts`, "drift-1", "nobody-runs-it", "nondeterministic", "Hello@", "Greet"} {
		if !strings.Contains(body, want) {
			t.Errorf("store page lacks %q", want)
		}
	}
}

// A failed instance's page offers rewind and retry; a confirmed rewind
// opens its next execution, which the page then shows.
func TestRewindFromThePage(t *testing.T) {
	f := newFixture(t, Options{Actions: true})
	if st := f.start(t, "nameless", "Hello", "", true); st.Status != runtime.StatusFailed {
		t.Fatalf("nameless: %s, want Failed (Greet refuses an empty name)", st.Status)
	}
	_, body := get(t, f, "/instance?id=nameless")
	for _, a := range []string{"rewind", "retry", "delete"} {
		if !strings.Contains(body, `href="/instance/`+a+`?id=nameless"`) {
			t.Errorf("failed instance's page lacks the %s action", a)
		}
	}
	if code, body := get(t, f, "/instance/rewind?id=nameless"); code != 200 || !strings.Contains(body, "before its failing step") {
		t.Fatalf("rewind confirmation: %d %s", code, errorText(body))
	}
	resp := post(t, f, "/instance/rewind", url.Values{"id": {"nameless"}}, "")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, url.QueryEscape("execution 2 runs from before Greet")) {
		t.Fatalf("rewind: %d to %q", resp.StatusCode, loc)
	}
	f.waitUntil(t, "nameless", func(st *runtime.Status) bool { return st.ExecutionID == 2 && st.Finished() })
	_, body = get(t, f, "/instance?id=nameless")
	if !strings.Contains(body, `href="/instance?id=nameless&amp;execution=1">1</a> <b>2</b>`) {
		t.Errorf("after the rewind the page does not link execution 1 and show execution 2:\n%s", body)
	}
	if resp := post(t, f, "/instance/rewind", url.Values{"id": {"h-1"}}, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("rewind of an unknown instance: %d, want 404", resp.StatusCode)
	}
}
