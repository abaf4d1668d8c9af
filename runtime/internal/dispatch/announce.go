package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// announce keeps this runtime's announcement in the store fresh until ctx
// ends, so tools can tell which orchestrations a pool's live workers run.
// A failed heartbeat is logged and retried at the next tick: announcements
// inform, they never stop the dispatchers.
func (r *Dispatcher) announce(ctx context.Context, w provider.Workers) {
	info := provider.WorkerInfo{ID: r.opts.WorkerID, Orchestrations: r.reg.Orchestrations(), Activities: r.reg.Activities(),
		Tags: r.opts.ActivityTags}
	tick := time.NewTicker(r.opts.HeartbeatInterval)
	defer tick.Stop()
	for {
		if err := w.Heartbeat(ctx, info); err != nil && ctx.Err() == nil {
			r.opts.Logger.Warn("worker announcement failed", "worker", info.ID, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// withdraw removes the announcement at a clean shutdown, so the worker does
// not look alive for another heartbeat window.
func (r *Dispatcher) withdraw(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.p.RemoveWorker(ctx, provider.WorkerRequest{ID: r.opts.WorkerID}); err != nil {
		r.opts.Logger.Warn("withdrawing the worker announcement failed", "worker", r.opts.WorkerID, "error", err)
	}
}

func DefaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}
