package ui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

// chromium finds the browser: $DUROXIDE_TEST_CHROMIUM (make test sets it
// from hack/chromium.sh, which installs Chromium when missing), else one on
// PATH. Without one the test fails, except under -short.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DUROXIDE_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome-stable", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testing.Short() {
		t.Skip("-short: no Chromium for the browser test (hack/chromium.sh installs it; make test runs it)")
	}
	t.Fatal("no Chromium: run hack/chromium.sh (make test does) or set DUROXIDE_TEST_CHROMIUM to a Chromium or Chrome binary")
	return ""
}

// browser is a headless Chromium tab, stopped with the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.WindowSize(1400, 900),
		chromedp.Flag("disable-dev-shm-usage", true))
	alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(stopAlloc)
	ctx, stop := chromedp.NewContext(alloc)
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// artifacts is where screenshots go: $DUROXIDE_TEST_ARTIFACTS, else
// bin/test-artifacts/ui of the module.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("DUROXIDE_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "bin", "test-artifacts")
	}
	dir = filepath.Join(dir, "ui")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	t.Logf("screenshots in %s", abs)
	return dir
}

// do runs browser steps and fails the test, naming what, on error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// navigate runs steps that load a page (a click on a link or a form's
// button) and waits until it has loaded; it fails the test on an HTTP error.
func navigate(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, steps...)
	if err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
	if resp.Status >= 400 {
		t.Fatalf("browser: %s: HTTP %d", what, resp.Status)
	}
}

// value runs a browser action that returns a value.
func value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
	return v
}

// save writes a screenshot into the artefacts.
func save(t *testing.T, dir, name string, png []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	save(t, dir, name, value(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100)))
}

// count is the number of elements selector matches.
func count(t *testing.T, ctx context.Context, selector string) int {
	t.Helper()
	return value(t, ctx, "count "+selector, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", selector)))
}

// text is the text of the first element selector matches.
func text(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	return value(t, ctx, "text of "+selector, chromedp.Text(chromedp.CSS(selector)))
}

// The acceptance run of the web view in a real browser: the list, a
// filter, an instance with a history of over a thousand events and its
// timeline, a stalled instance, the store page and a confirmed action.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	dir := artifacts(t)
	f := newFixture(t, Options{Actions: true, Title: "duroxide (browser test)"})
	for i := range 3 {
		f.start(t, fmt.Sprintf("hello-%d", i), "Hello", fmt.Sprintf("reader %d", i), true)
	}
	retry := fmt.Sprintf("retry-%d", time.Now().UnixNano()) // FlakyCharge counts calls per instance ID
	f.start(t, retry, "Retry", "payment-7", true)
	f.start(t, "fanout-1", "SubFanOut", []string{"Ada", "Grace", "Linus"}, true)
	many := f.start(t, "many-1", "Many", "", true)
	f.start(t, "approval-1", "Approval", samples.ApprovalRequest{Item: "laptop", Timeout: time.Hour}, false)
	f.stall(t, "drift-1")
	events, err := f.client.History(t.Context(), "many-1")
	if err != nil || len(events) < 1000 {
		t.Fatalf("many-1 (%s) has %d events (%v), want over 1,000", many.Status, len(events), err)
	}

	// The list, newest first, every instance a row.
	do(t, ctx, "open the list", chromedp.Navigate(f.srv.URL+"/instances"), chromedp.WaitVisible(chromedp.ID("instances")))
	if n := count(t, ctx, "#instances tbody tr"); n < 10 {
		t.Errorf("the list shows %d rows, want every instance (10 with fanout-1's children)", n)
	}
	screenshot(t, ctx, dir, "1-list.png")

	// Filter by status: the stalled instance alone, marked Stalled.
	do(t, ctx, "choose Stalled", chromedp.SetValue(chromedp.CSS(`select[name="status"]`), "Stalled"))
	navigate(t, ctx, "filter", chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
	if search := value(t, ctx, "read the URL", chromedp.Evaluate[string]("location.search")); !strings.Contains(search, "status=Stalled") {
		t.Errorf("the filter form went to %q", search)
	}
	if n, first := count(t, ctx, "#instances tbody tr"), text(t, ctx, "#instances tbody tr td .status"); n != 1 || first != "Stalled" {
		t.Errorf("Stalled filter: %d rows, first marked %q; want drift-1 alone, Stalled", n, first)
	}
	screenshot(t, ctx, dir, "2-list-stalled.png")
	navigate(t, ctx, "open the stalled instance", chromedp.Click(chromedp.CSS(`#instances a`)))
	if stalled := text(t, ctx, "#stalled"); !strings.Contains(stalled, "Stalled: nondeterminism") {
		t.Errorf("stalled instance says %q, want its kind", stalled)
	}
	screenshot(t, ctx, dir, "3-instance-stalled.png")

	// The instance with over a thousand events: its timeline renders every
	// activity and timer as a visible bar.
	do(t, ctx, "list many-", chromedp.Navigate(f.srv.URL+"/instances?prefix=many-"))
	navigate(t, ctx, "open many-1", chromedp.Click(chromedp.CSS(`#instances a`)))
	bars, rows := count(t, ctx, "#timeline g.bar"), count(t, ctx, "#history tbody tr")
	if want := manyWaves*manyWidth + manyWaves/10; bars != want || rows != len(events) {
		t.Errorf("many-1 shows %d bars and %d history rows, want %d and %d", bars, rows, want, len(events))
	}
	type drawing struct{ Width, Height, Narrowest float64 }
	drawn := value(t, ctx, "measure the timeline", chromedp.Evaluate[drawing](`(() => {
		const svg = document.querySelector("#timeline").getBoundingClientRect();
		const widths = Array.from(document.querySelectorAll("#timeline g.bar rect")).map(r => r.getBBox().width);
		return {Width: svg.width, Height: svg.height, Narrowest: Math.min(...widths)};
	})()`))
	if drawn.Width < 900 || drawn.Height < 100 || drawn.Narrowest < minBar {
		t.Errorf("timeline drawn %+v, want a wide, tall SVG whose every bar is visible", drawn)
	}
	save(t, dir, "4-timeline-1000-events.png", value(t, ctx, "screenshot the timeline", chromedp.Screenshot(chromedp.ID("timeline"))))
	save(t, dir, "5-instance-many.png", value(t, ctx, "screenshot many-1", chromedp.CaptureScreenshot()))

	// The retry sample: attempts and labelled backoffs.
	do(t, ctx, "open "+retry, chromedp.Navigate(f.srv.URL+"/instance?id="+retry), chromedp.WaitVisible(chromedp.ID("timeline")))
	if failed, backoffs := count(t, ctx, "#timeline g.bar.activity.failed"), count(t, ctx, "#timeline g.bar.timer"); failed != 2 || backoffs != 2 {
		t.Errorf("retry timeline: %d failed attempts, %d backoff timers; want 2 and 2", failed, backoffs)
	}
	screenshot(t, ctx, dir, "6-instance-retry.png")

	// A parent with its children.
	do(t, ctx, "open fanout-1", chromedp.Navigate(f.srv.URL+"/instance?id=fanout-1"), chromedp.WaitVisible(chromedp.ID("tree")))
	if n := count(t, ctx, "#tree li li"); n != 3 {
		t.Errorf("fanout-1's tree shows %d children, want 3", n)
	}
	screenshot(t, ctx, dir, "7-instance-children.png")

	do(t, ctx, "open the store page", chromedp.Navigate(f.srv.URL+"/store"), chromedp.WaitVisible(chromedp.ID("workers")))
	if n := count(t, ctx, "#workers tbody tr"); n != 1 {
		t.Errorf("store page lists %d workers, want 1", n)
	}
	screenshot(t, ctx, dir, "8-store.png")

	// An action, confirmed on its own page, from the browser's form.
	do(t, ctx, "open approval-1", chromedp.Navigate(f.srv.URL+"/instance?id=approval-1"))
	navigate(t, ctx, "raise", chromedp.Click(chromedp.CSS(`a.button[href*="/instance/raise"]`)))
	do(t, ctx, "fill in the event",
		chromedp.SendKeys(chromedp.CSS(`input[name="event"]`), "approval"),
		chromedp.SetValue(chromedp.CSS(`textarea[name="data"]`), `{"approved": true, "by": "browser"}`))
	screenshot(t, ctx, dir, "9-confirm-raise.png")
	navigate(t, ctx, "confirm", chromedp.Click(chromedp.ID("confirm")))
	if done := text(t, ctx, "#done"); done != "event approval raised" {
		t.Errorf("after confirming: %q", done)
	}
	if st := f.waitUntil(t, "approval-1", (*runtime.Status).Finished); st.Output != `"laptop: approved by browser"` {
		t.Errorf("approval-1 output %s", st.Output)
	}
}
