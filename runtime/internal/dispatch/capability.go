package dispatch

import (
	"context"
	"errors"

	"github.com/duroxide/duroxide-go/provider"
)

// A runtime fetches only the instances whose orchestration and pinned
// version it registers (provider.Capability), and the starts that ask for
// one, so two builds of the code on one store never run each other's
// instances. What the filter cannot see is handed back unharmed, no attempt
// counted, for a process that has the code:
//   - the turn an activity's ack locks (reportActivity), of any instance;
//   - a turn that starts an execution at a version this process lacks
//     (ContinueAsNewVersion, or a start of an instance pinned to a version
//     it has, asking for one it has not).
// Such work waits for its code, as a start nobody registers does: a deploy
// that brings the code late loses nothing.

// handBackUnadmitted releases a turn of an orchestration or version this
// process does not register, without counting an attempt.
func (r *Dispatcher) handBackUnadmitted(ctx context.Context, item *provider.OrchestrationItem) {
	r.opts.Logger.Debug("turn of an orchestration version this process does not register; handing it back",
		"instance", item.Instance, "orchestration", item.OrchestrationName, "version", item.Version)
	err := r.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true})
	if err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
		r.opts.Logger.Error("hand back failed; the lock will expire", "instance", item.Instance, "error", err)
	}
}

// waitForCode hands back a turn whose orchestration or version this
// process does not register, with backoff and without counting an attempt;
// the cause stays the instance's LastError until a process that has the
// code commits a turn.
func (r *Dispatcher) waitForCode(ctx context.Context, item *provider.OrchestrationItem, cause *provider.ErrorDetails) {
	r.opts.Logger.Warn("turn needs code this process does not register; handing it back for a process that does",
		"instance", item.Instance, "error", cause.Message)
	r.metrics.stalled(ctx, "orchestration", cause.Class)
	err := r.p.AbandonOrchestrationItem(ctx, provider.AbandonRequest{LockToken: item.LockToken, IgnoreAttempt: true,
		Delay: r.opts.backoff(item.AttemptCount), Cause: cause})
	if err != nil && !errors.Is(err, provider.ErrLockNotHeld) {
		r.opts.Logger.Error("hand back failed; the lock will expire", "instance", item.Instance, "error", err)
	}
}
