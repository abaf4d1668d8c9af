package providertest

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// The functions below are shorthands for tests: each is one shape of
// provider.CommitRequest, provider.StartRequest or a cached
// provider.FetchRequest, so that a case reads as the step it takes.

// AckTurn commits a locked turn.
func AckTurn(ctx context.Context, p provider.Provider, token string, ack provider.OrchestrationAck) error {
	_, err := p.Commit(ctx, provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnLocked, LockToken: token, Ack: ack}})
	return err
}

// AckTurnLeasing commits a locked turn, leasing the worker items at lease.
func AckTurnLeasing(ctx context.Context, p provider.Provider, token string, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) ([]*provider.WorkItemLease, error) {
	c, err := p.Commit(ctx, provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnLocked, LockToken: token, Ack: ack, Lease: lease, LeaseFor: leaseFor}})
	return c.Leases, err
}

// AckTurnNext commits a locked turn of instance, leasing, and locks its next turn.
func AckTurnNext(ctx context.Context, p provider.Provider, instance, token string, ack provider.OrchestrationAck, lease []int, leaseFor, lockFor time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error) {
	c, err := p.Commit(ctx, provider.CommitRequest{
		Turn:        &provider.TurnCommit{Hold: provider.TurnLocked, Instance: instance, LockToken: token, Ack: ack, Lease: lease, LeaseFor: leaseFor},
		LockNextFor: lockFor,
	})
	return c.Leases, c.Next, err
}

// CommitFirstTurn commits a new instance's first turn (direct start).
func CommitFirstTurn(ctx context.Context, p provider.Provider, instance string, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) (bool, []*provider.WorkItemLease, error) {
	c, err := p.Commit(ctx, provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnNew, Instance: instance, Ack: ack, Lease: lease, LeaseFor: leaseFor}})
	return c.Created, c.Leases, err
}

// CommitCachedTurn commits a turn built from the cache with the activity
// leased under workToken, whose result is the turn's last message, or, with
// workToken "", alone (a timers' turn).
func CommitCachedTurn(ctx context.Context, p provider.Provider, workToken string, turn *provider.OrchestrationItem, ack provider.OrchestrationAck, lease []int, leaseFor time.Duration) ([]*provider.WorkItemLease, error) {
	req := provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnCached, Cached: turn, Ack: ack, Lease: lease, LeaseFor: leaseFor}}
	if workToken != "" {
		var result *provider.WorkItem
		if turn != nil && len(turn.Messages) > 0 {
			result = &turn.Messages[len(turn.Messages)-1]
		}
		req.Activity = &provider.ActivityResult{LockToken: workToken, Result: result}
	}
	c, err := p.Commit(ctx, req)
	return c.Leases, err
}

// CachedTurn asks the store's cache for the turn delivering queued, then
// msg (provider.FetchRequest.Deliver); nil when there is none. execution
// must be msg's.
func CachedTurn(p provider.Provider, instance string, execution int64, msg provider.WorkItem, queued ...provider.WorkItem) *provider.OrchestrationItem {
	if msg.ExecutionID != execution {
		return nil
	}
	items, err := p.Fetch(context.Background(), provider.FetchRequest{Max: 1, Instance: instance, FromCache: true, Deliver: append(queued, msg)})
	if err != nil || len(items) == 0 {
		return nil
	}
	return items[0]
}

// AckActivity commits an activity's result (nil: removes the item).
func AckActivity(ctx context.Context, p provider.Provider, token string, result *provider.WorkItem) error {
	_, err := p.Commit(ctx, provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: token, Result: result}})
	return err
}

// AckActivityQuietly commits an activity's result quietly when its history
// still ends at lastEvent.
func AckActivityQuietly(ctx context.Context, p provider.Provider, token string, result provider.WorkItem, lastEvent int64) (bool, error) {
	c, err := p.Commit(ctx, provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: token, Result: &result, QuietAfter: lastEvent}})
	return c.Quiet, err
}

// AckActivityNext commits an activity's result and locks its instance's turn.
func AckActivityNext(ctx context.Context, p provider.Provider, token string, result provider.WorkItem, lockFor time.Duration) (*provider.OrchestrationItem, error) {
	c, err := p.Commit(ctx, provider.CommitRequest{Activity: &provider.ActivityResult{LockToken: token, Result: &result}, LockNextFor: lockFor})
	return c.Next, err
}

// Start queues a start and its events.
func Start(ctx context.Context, p provider.Provider, start provider.WorkItem, events []provider.WorkItem, reuse provider.IDReusePolicy) error {
	_, err := p.StartInstance(ctx, provider.StartRequest{Start: start, Events: events, Reuse: reuse})
	return err
}

// StartLocking queues a start and locks its first turn (eager start).
func StartLocking(ctx context.Context, p provider.Provider, start provider.WorkItem, reuse provider.IDReusePolicy, lockFor time.Duration) (*provider.OrchestrationItem, error) {
	return p.StartInstance(ctx, provider.StartRequest{Start: start, Reuse: reuse, LockFor: lockFor})
}
