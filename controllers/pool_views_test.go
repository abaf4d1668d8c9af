package controllers_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/controllers"
)

// The operator's web view: an index of the pools, each pool's store behind
// /pools/NAMESPACE/NAME/, read-only until the pool sets spec.ui.actions.
func TestPoolWebView(t *testing.T) {
	p := newPool(t)
	srv := httptest.NewServer(controllers.PoolViews(k8s, stores))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := p.client.Start(ctx, "viewed-1", "Hello", "view"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.Wait(ctx, "viewed-1"); err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	base := "/pools/" + p.ns + "/" + p.name
	if code, body := get("/"); code != 200 || !strings.Contains(body, `href="`+base+`/instances"`) {
		t.Errorf("index: %d, want a link to %s", code, base)
	}
	if code, body := get(base + "/instances"); code != 200 || !strings.Contains(body, `href="`+base+`/instance?id=viewed-1"`) {
		t.Errorf("pool's list: %d, want viewed-1 linked under the pool's prefix:\n%s", code, body)
	}
	if code, body := get(base + "/instance?id=viewed-1"); code != 200 || !strings.Contains(body, "Hello, view!") {
		t.Errorf("instance page: %d, want its output", code)
	}
	if code, _ := get("/pools/" + p.ns + "/no-such-pool/instances"); code != http.StatusNotFound {
		t.Errorf("unknown pool: %d, want 404", code)
	}
	deleteViewed := func() int {
		resp, err := http.PostForm(srv.URL+base+"/instance/delete", url.Values{"id": {"viewed-1"}})
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := deleteViewed(); code != http.StatusForbidden {
		t.Errorf("delete on a read-only pool view: %d, want 403", code)
	}

	// The operator writes the pool too (its finalizers): change retries on a conflict.
	pool := &v1.WorkerPool{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name}}
	change(t, pool, func() { pool.Spec.UI = &v1.WorkerPoolUI{Actions: true} })
	if code, body := get(base + "/instance/delete?id=viewed-1"); code != 200 || !strings.Contains(body, `id="confirm"`) {
		t.Errorf("delete confirmation once spec.ui.actions is set: %d", code)
	}
	if code := deleteViewed(); code != http.StatusOK {
		t.Errorf("confirmed delete: %d, want the list after the redirect", code)
	}
	if _, err := p.client.Status(ctx, "viewed-1"); err == nil {
		t.Error("viewed-1 is still in the store after the view deleted it")
	}
}
