package postgres

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// claimFor is how long a commit locks an instance it holds no lock on (a
// first turn's, a cached turn's): the lock is taken and released in the
// commit's transaction, so it only needs to outlast that transaction.
const claimFor = time.Minute

// Commit implements provider.Provider: the store engine picks the driver
// operation.
func (p *Provider) Commit(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	return p.eng.Commit(ctx, req)
}

// Fetch implements provider.Provider.
func (p *Provider) Fetch(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	return p.eng.Fetch(ctx, req)
}

// FetchWorkItem implements provider.Provider.
func (p *Provider) FetchWorkItem(ctx context.Context, req provider.FetchWorkRequest) (*provider.WorkItemLease, error) {
	return p.eng.FetchWork(ctx, req)
}

// StartInstance implements provider.Provider: dx_start_instance checks the
// ID, replaces what holds it when the policy allows, and queues the start
// and its events, in one transaction that no other start of the ID
// interleaves.
func (p *Provider) StartInstance(ctx context.Context, req provider.StartRequest) (*provider.OrchestrationItem, error) {
	return p.eng.StartInstance(ctx, req)
}

// AbandonOrchestrationItem implements provider.Provider.
func (p *Provider) AbandonOrchestrationItem(ctx context.Context, req provider.AbandonRequest) error {
	return p.eng.AbandonTurn(ctx, req)
}

// RenewOrchestrationItemLock implements provider.Provider.
func (p *Provider) RenewOrchestrationItemLock(ctx context.Context, req provider.RenewRequest) error {
	return p.eng.RenewTurn(ctx, req)
}

// AbandonWorkItem implements provider.Provider.
func (p *Provider) AbandonWorkItem(ctx context.Context, req provider.AbandonRequest) error {
	return p.eng.AbandonWork(ctx, req)
}

// RenewWorkItemLock implements provider.Provider.
func (p *Provider) RenewWorkItemLock(ctx context.Context, req provider.RenewRequest) (provider.ExecutionState, error) {
	return p.eng.RenewWork(ctx, req)
}

// driver is the store's operations (storeengine.Driver), as the engine
// calls them.
type driver struct{ p *Provider }
