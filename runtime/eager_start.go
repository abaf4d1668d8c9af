package runtime

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
)

// Client returns a client on the runtime's store whose Start runs the new
// instance's first turn in this runtime when it can (eager start): the store
// supports it, this runtime has the orchestration's code and a turn slot is
// free. The start is then queued and the instance locked in one commit, and
// the turn runs at once, with no fetch and no other dispatcher woken.
// Otherwise, and for starts with StartWithEvent, Start queues the start as a
// NewClient's does. The client works after Shutdown too, queuing plainly.
func (r *Runtime) Client() *Client {
	c := NewClient(r.p)
	c.eager = r
	return c
}

// startEagerly queues item and runs its first turn here when it can. It
// reports false, having done nothing, when the start must be queued plainly.
// On error nothing was queued.
func (r *Runtime) startEagerly(ctx context.Context, item provider.WorkItem) (bool, error) {
	s, ok := r.p.(provider.EagerStarter)
	if !ok {
		return false, nil
	}
	if _, _, err := r.reg.orchestration(item.Name, item.Version); err != nil {
		return false, nil
	}
	if !r.holdLoop() {
		return false, nil
	}
	if tryAcquire(r.turnSlots, 1) == 0 {
		r.loops.Done()
		return false, nil
	}
	turn, err := s.EnqueueForOrchestratorFetching(ctx, item, r.opts.OrchestrationLockTimeout)
	if turn == nil {
		<-r.turnSlots
		r.loops.Done()
		return true, err
	}
	go func() {
		defer r.loops.Done()
		defer func() { <-r.turnSlots }()
		r.runOrchestrationItem(context.WithoutCancel(r.fetchCtx), turn)
	}()
	return true, nil
}

// holdLoop counts one more running loop for Shutdown to wait for, unless the
// runtime is not running: Shutdown stops fetching under the same mutex, so a
// loop counted here is never missed by its wait.
func (r *Runtime) holdLoop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.accepting() {
		return false
	}
	r.loops.Add(1)
	return true
}
