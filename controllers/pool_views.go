package controllers

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/ui"
)

// poolViews serves the web view of each pool's store: / lists the pools,
// /pools/NAMESPACE/NAME/ is the view (package ui) of that pool's store,
// read-only unless the pool's spec.ui.actions is set. Who may reach it is
// who may reach the operator's ui Service (kubectl port-forward needs
// pods/portforward in the operator's namespace).
type poolViews struct {
	pools  client.Reader
	stores *poolStores
	logger *slog.Logger

	mu    sync.Mutex
	views map[types.NamespacedName]poolView
}

// poolView is a pool's handler and what it was built for; a change of store
// or of spec.ui.actions builds it again.
type poolView struct {
	store   *poolStore
	actions bool
	handler http.Handler
}

func newPoolViews(pools client.Reader, stores *poolStores, logger *slog.Logger) *poolViews {
	if logger == nil {
		logger = slog.Default()
	}
	return &poolViews{pools: pools, stores: stores, logger: logger, views: map[types.NamespacedName]poolView{}}
}

// Handler routes the index and each pool's pages.
func (v *poolViews) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", v.index)
	mux.HandleFunc("/pools/{namespace}/{name}/", v.pool)
	return mux
}

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>duroxide pools</title>
<style>body{font:14px system-ui,sans-serif;margin:24px}td,th{padding:4px 12px;text-align:left}</style></head>
<body><h1>Worker pools</h1>
<table id="pools"><tr><th>Pool</th><th>Replicas</th><th>Schema</th><th>View</th></tr>
{{range .}}<tr><td>{{.Namespace}}/{{.Name}}</td><td>{{.Status.ReadyReplicas}}/{{if .Spec.Replicas}}{{.Spec.Replicas}}{{end}}</td><td>{{.Spec.Postgres.Schema}}</td>
<td><a href="/pools/{{.Namespace}}/{{.Name}}/instances">instances</a> · <a href="/pools/{{.Namespace}}/{{.Name}}/store">store</a>{{if and .Spec.UI .Spec.UI.Actions}} (actions on){{end}}</td></tr>
{{else}}<tr><td colspan="4">No WorkerPool in the cluster.</td></tr>{{end}}
</table></body></html>`))

func (v *poolViews) index(w http.ResponseWriter, r *http.Request) {
	var pools v1.WorkerPoolList
	if err := v.pools.List(r.Context(), &pools); err != nil {
		v.logger.Error("ui: list pools", "err", err)
		http.Error(w, "listing the worker pools failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := indexPage.Execute(w, pools.Items); err != nil {
		v.logger.Error("ui: index page", "err", err)
	}
}

// pool serves a page of a pool's view: 404 for a pool that does not
// exist, 503 while its store cannot be reached (the reason, which never
// holds credentials, says why).
func (v *poolViews) pool(w http.ResponseWriter, r *http.Request) {
	key := types.NamespacedName{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}
	var pool v1.WorkerPool
	if err := v.pools.Get(r.Context(), key, &pool); err != nil {
		status := http.StatusInternalServerError
		if apierrors.IsNotFound(err) {
			status = http.StatusNotFound
		}
		http.Error(w, fmt.Sprintf("worker pool %s: %v", key, err), status)
		return
	}
	h, err := v.viewOf(r.Context(), &pool)
	if err != nil {
		http.Error(w, fmt.Sprintf("worker pool %s: its store is not available: %v", key, err), http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}

// viewOf returns the pool's view, built again when its store or its
// actions setting changed.
func (v *poolViews) viewOf(ctx context.Context, pool *v1.WorkerPool) (http.Handler, error) {
	st, err := v.stores.ForPool(ctx, pool)
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name}
	actions := pool.Spec.UI != nil && pool.Spec.UI.Actions
	v.mu.Lock()
	defer v.mu.Unlock()
	if view, ok := v.views[key]; ok && view.store == st && view.actions == actions {
		return view.handler, nil
	}
	prefix := "/pools/" + pool.Namespace + "/" + pool.Name
	h := http.StripPrefix(prefix, ui.New(st.Client, st.provider, ui.Options{
		Actions: actions, Prefix: prefix, Title: "duroxide · " + key.String(), Logger: v.logger}))
	v.views[key] = poolView{store: st, actions: actions, handler: h}
	return h, nil
}

// serveViews is the manager's runnable for the views: it serves on addr
// in every replica (reading needs no leader) until ctx ends.
type serveViews struct {
	addr  string
	views *poolViews
}

func (s serveViews) NeedLeaderElection() bool { return false }

func (s serveViews) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("web view: listen on %s: %w", s.addr, err)
	}
	srv := &http.Server{Handler: s.views.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web view: %w", err)
	}
	return nil
}
