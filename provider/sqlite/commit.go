package sqlite

import (
	"context"

	"github.com/duroxide/duroxide-go/provider"
)

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

// StartInstance implements provider.Provider.
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
