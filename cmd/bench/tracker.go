package main

import (
	"context"
	"sync"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// tracker turns one Watch subscription into per-instance completion signals,
// so that measuring adds one watcher, not one per instance.
type tracker struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	done   map[string]time.Time
	wait   map[string]chan time.Time
	failed map[string]provider.ExecutionStatus
}

func newTracker(ctx context.Context, p provider.Provider) (*tracker, error) {
	ctx, cancel := context.WithCancel(ctx)
	ch, err := p.Watch(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	t := &tracker{cancel: cancel, done: map[string]time.Time{}, wait: map[string]chan time.Time{}, failed: map[string]provider.ExecutionStatus{}}
	go func() {
		for c := range ch {
			switch c.Status {
			case provider.StatusCompleted, provider.StatusFailed, provider.StatusTerminated:
				t.finished(c.Instance, c.Status, time.Now())
			}
		}
	}()
	return t, nil
}

func (t *tracker) finished(instance string, status provider.ExecutionStatus, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, seen := t.done[instance]; seen {
		return
	}
	t.done[instance] = at
	if status != provider.StatusCompleted {
		t.failed[instance] = status
	}
	if w, ok := t.wait[instance]; ok {
		w <- at
		delete(t.wait, instance)
	}
}

// await returns when instance finished, as observed by the watcher.
func (t *tracker) await(ctx context.Context, instance string) (time.Time, error) {
	t.mu.Lock()
	if at, ok := t.done[instance]; ok {
		t.mu.Unlock()
		return at, nil
	}
	w := make(chan time.Time, 1)
	t.wait[instance] = w
	t.mu.Unlock()
	select {
	case at := <-w:
		return at, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

func (t *tracker) count() (done, failed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.done), len(t.failed)
}

func (t *tracker) stop() { t.cancel() }

func (t *tracker) aFailure() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range t.failed {
		return id
	}
	return ""
}
