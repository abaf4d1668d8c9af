package ui

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/internal/inspect"
	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configures the view.
type Options struct {
	// Actions enables the pages that change instances: raise, cancel,
	// terminate, delete. Off, the view only reads.
	Actions bool
	// Prefix is the path the view is mounted under ("" at the root), for
	// its links.
	Prefix string
	// Title names the store in each page's header (default "duroxide").
	Title string
	// Logger receives errors the pages show as 500 (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.Title == "" {
		o.Title = "duroxide"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Prefix = strings.TrimSuffix(o.Prefix, "/")
}

type server struct {
	client *runtime.Client
	store  provider.Provider
	opts   Options
	pages  map[string]*template.Template
}

// New returns the view of store's instances; client acts on them.
func New(client *runtime.Client, store provider.Provider, opts Options) http.Handler {
	opts.defaults()
	s := &server{client: client, store: store, opts: opts, pages: parsePages(opts)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, opts.Prefix+"/instances", http.StatusFound)
	})
	mux.HandleFunc("GET /instances", s.listPage)
	mux.HandleFunc("GET /instance", s.instancePage)
	mux.HandleFunc("GET /store", s.storePage)
	mux.HandleFunc("GET /instance/{action}", s.confirmPage)
	mux.HandleFunc("POST /instance/{action}", s.act)
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	return http.NewCrossOriginProtection().Handler(mux)
}

// parsePages parses each page with the layout around it. The templates are
// embedded, so a parse error is a bug caught by any test.
func parsePages(opts Options) map[string]*template.Template {
	funcs := template.FuncMap{
		"prefix":   func() string { return opts.Prefix },
		"title":    func() string { return opts.Title },
		"actions":  func() bool { return opts.Actions },
		"age":      func(t time.Time) string { return inspect.Age(opts.Now().Sub(t)) },
		"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
		"duration": inspect.ShortDuration,
		"lower":    strings.ToLower,
	}
	pages := map[string]*template.Template{}
	for _, name := range []string{"list", "instance", "store", "confirm", "error"} {
		pages[name] = template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return pages
}

// render writes page with data; data's Title, when it has one, is the
// page's title.
func (s *server) render(w http.ResponseWriter, status int, page string, data any) {
	var b strings.Builder
	if err := s.pages[page].Execute(&b, data); err != nil {
		s.opts.Logger.Error("ui: render", "page", page, "err", err)
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

type errorData struct {
	Title, Message string
	Status         int
}

// fail shows err on an error page: 404 for an instance that does not exist,
// 400 for bad input, 500 (and a log line) for the rest.
func (s *server) fail(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var bad *badRequest
	switch {
	case errors.Is(err, provider.ErrNotFound):
		status = http.StatusNotFound
	case errors.As(err, &bad):
		status = http.StatusBadRequest
	case errors.Is(err, errReadOnly):
		status = http.StatusForbidden
	default:
		s.opts.Logger.Error("ui: request failed", "err", err)
	}
	s.render(w, status, "error", errorData{Title: http.StatusText(status), Message: err.Error(), Status: status})
}

// badRequest is input the page cannot use.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badRequestf(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

var errReadOnly = errors.New("this view is read-only: actions are off (duroxide ui --actions, or the pool's ui.actions)")
