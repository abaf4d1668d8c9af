package controllers

import (
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/duroxide/duroxide-go/provider"
)

// liveWorkerWindow: a worker counts as live when it announced itself this
// recently (the runtime renews its announcement every 15s by default).
const liveWorkerWindow = time.Minute

// workersTTL is how long one read of the announcements serves a pool's
// Orchestrations: a burst of new ones costs one query, not one each.
const workersTTL = 5 * time.Second

// workerCache holds a pool's last read of worker announcements.
type workerCache struct {
	mu     sync.Mutex
	readAt time.Time
	live   []provider.WorkerInfo
}

// liveWorkers returns the pool's live workers; ok is false when the store
// keeps no announcements or they cannot be read (then nothing can be said).
func (st *poolStore) liveWorkers(ctx context.Context) ([]provider.WorkerInfo, bool) {
	w := st.provider
	st.workers.mu.Lock()
	defer st.workers.mu.Unlock()
	if !st.workers.readAt.IsZero() && time.Since(st.workers.readAt) < workersTTL {
		return st.workers.live, true
	}
	live, err := w.ListWorkers(ctx, provider.ListWorkersRequest{Within: liveWorkerWindow})
	if err != nil {
		log.FromContext(ctx).V(1).Info("cannot read worker announcements", "error", err.Error())
		return nil, false
	}
	st.workers.readAt, st.workers.live = time.Now(), live
	return live, true
}
