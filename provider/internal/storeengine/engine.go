// Package storeengine is the store engine: the part of a provider.Provider
// every store shares, written once over a store's Driver. It holds
//
//   - what a Commit, Fetch or Start request means and which driver operation
//     serves it, once the request validated (commit.go, fetch.go), and the
//     checks of lock hand-backs and renewals (locks.go);
//   - the history cache and the cached turns built from it, with the set of
//     cached timer turns in flight;
//   - the timer notes (wake.Due) and the scan gate that decide when a fetch
//     takes due timers by name and when it looks for any ready work;
//   - the long polls of turn and activity fetches, and the signals that wake
//     them;
//   - the quiet-result check's reading of the cache.
//
// A driver holds only storage: typed operations on its tables, each atomic.
//
// It imports provider, provider/internal/{encode, histcache, wake} and the
// OpenTelemetry metric API only; the stores import it, never the reverse.
package storeengine

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
	"github.com/duroxide/duroxide-go/provider/internal/histcache"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
)

// Config is what an engine needs of its store's options.
type Config struct {
	// HistoryCache is histcache.New's size: 0 the default, negative none.
	HistoryCache int
	// PollInterval is how often a sleeping fetch looks again unwoken.
	PollInterval time.Duration
	// Closed is closed when the store closes: polls end then.
	Closed <-chan struct{}
	// MeterProvider receives the store's metrics (nil: none); Store names
	// the store in them.
	MeterProvider metric.MeterProvider
	Store         string
}

// Engine implements the shared part of a store over its Driver. Its fields
// are the state drivers update as their operations commit.
type Engine struct {
	driver Driver
	cfg    Config

	// Hist is the history cache (nil when off; its methods allow that).
	Hist *histcache.Cache
	// Due is what this process knows of the timers its acks queued: when
	// its sleeping fetchers must wake, and which instances to fetch by name
	// then.
	Due *wake.Due
	// InFlight are the instances whose cached timer turns were handed out
	// and have not reported back: a look for ready work leaves them out.
	InFlight histcache.InFlight

	// OrchestratorWork, WorkerWork and StatusChanged wake this process's
	// turn fetches, activity fetches and status watchers.
	OrchestratorWork, WorkerWork, StatusChanged *wake.Signal

	// gate says when a fetch must look for ready work rather than take due
	// timers by name.
	gate *wake.ScanGate

	metrics *storeMetrics
}

// New returns an engine over d.
func New(d Driver, cfg Config) *Engine {
	e := &Engine{
		driver: d, cfg: cfg,
		Hist: histcache.New(cfg.HistoryCache), Due: wake.NewDue(),
		OrchestratorWork: wake.NewSignal(), WorkerWork: wake.NewSignal(), StatusChanged: wake.NewSignal(),
	}
	e.gate = wake.NewScanGate(e.OrchestratorWork, cfg.PollInterval)
	e.metrics = e.newStoreMetrics(cfg.MeterProvider, cfg.Store)
	return e
}

// CheckOpen returns provider.ErrClosed, as a permanent error of op, once the
// store closed.
func (e *Engine) CheckOpen(op string) error {
	select {
	case <-e.cfg.Closed:
		return provider.Permanent(op, "", provider.ErrClosed)
	default:
		return nil
	}
}

// Acked updates the cache and the timer notes after a turn's ack of
// instance committed (created: the ack created the instance, as
// incarnation). It reports whether the ack queued timers due later, which
// no announcement covers.
func (e *Engine) Acked(instance string, created bool, incarnation int64, enc encode.Ack, ackedAtMs int64) (timersLater bool) {
	e.Hist.Acked(instance, created, incarnation, enc)
	return e.Due.Acked(instance, enc, ackedAtMs)
}

// Fetched notes a turn a fetch locked, once that fetch committed: its
// queued timers are taken (no turn is built for them from the cache), and
// its history, whole, is cached for the instance's next turn. A turn
// without an instance or with undecodable data is forgotten instead.
func (e *Engine) Fetched(item *provider.OrchestrationItem, incarnation int64) {
	e.TimersTaken(item)
	if !item.Exists || item.DecodeError != nil {
		e.Hist.Forget(item.Instance)
		return
	}
	e.Hist.Store(item.Instance, incarnation, item.ExecutionID, item.History, "")
	if len(item.History) > 0 {
		e.Hist.NoteCustomStatus(item.Instance, item.ExecutionID, item.History[len(item.History)-1].ID, item.CustomStatus)
	}
}

// TimersTaken notes that a locked turn took the timers it delivers: no turn
// is built for them from the cache.
func (e *Engine) TimersTaken(item *provider.OrchestrationItem) {
	for _, timer := range encode.QueuedTimers(item) {
		e.Due.Taken(item.Instance, timer)
	}
}
