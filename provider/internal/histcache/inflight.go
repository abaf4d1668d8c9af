package histcache

import (
	"sync"
	"time"
)

// inFlightFor bounds how long an instance stays in flight when its turn
// never reports back (a runtime that dropped it): its messages are then
// found by looks for ready work again.
const inFlightFor = 30 * time.Second

// InFlight is the set of instances whose timer turns a fetch built from the
// cache and handed out, until their commit (or the fetch by name a stale
// one falls back to) reports back. A look for ready work leaves them out:
// locking one would only make its cached turn stale. Safe for concurrent use.
type InFlight struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// Add puts instance in flight.
func (f *InFlight) Add(instance string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.since == nil {
		f.since = map[string]time.Time{}
	}
	f.since[instance] = time.Now()
}

// Done takes instance out of flight.
func (f *InFlight) Done(instance string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.since, instance)
}

// List returns the instances in flight, dropping those in flight too long.
func (f *InFlight) List() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.since))
	for instance, at := range f.since {
		if time.Since(at) > inFlightFor {
			delete(f.since, instance)
			continue
		}
		out = append(out, instance)
	}
	return out
}
