package dispatch

import (
	"log/slog"
	"sync"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// outage tracks whether the store is failing the dispatchers' fetches, so an
// outage is logged once when it begins and once when it ends, not once per
// failed poll of every poller.
type outage struct {
	mu       sync.Mutex
	since    time.Time
	failures int
}

// failed records a failed fetch; the first of an outage is logged.
func (o *outage) failed(log *slog.Logger, what string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failures++
	if o.failures == 1 {
		o.since = time.Now()
		log.Error("store unreachable; dispatchers retry with backoff", "op", what, "error", err, "class", provider.ErrorInfrastructure)
		return
	}
	log.Debug("store still unreachable", "op", what, "error", err)
}

// succeeded records a working fetch; the end of an outage is logged.
func (o *outage) succeeded(log *slog.Logger) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failures == 0 {
		return
	}
	log.Info("store reachable again", "outage", time.Since(o.since).Round(time.Millisecond).String(), "failedFetches", o.failures)
	o.failures = 0
}
