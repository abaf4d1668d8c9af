package storeengine

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// recorder is a driver that records which operation a request took and
// answers as its fields say.
type recorder struct {
	took  string
	quiet QuietCheck
	// ready answers LockReady; readyCalls are its requests.
	ready      func(ReadyParams) (Ready, error)
	readyCalls []ReadyParams
	named      *provider.OrchestrationItem
}

func (r *recorder) LockReady(_ context.Context, p ReadyParams) (Ready, error) {
	r.took = "LockReady"
	r.readyCalls = append(r.readyCalls, p)
	if r.ready == nil {
		return Ready{}, nil
	}
	return r.ready(p)
}

func (r *recorder) LockInstance(_ context.Context, instance string, _ time.Duration) (*provider.OrchestrationItem, error) {
	r.took = "LockInstance " + instance
	return r.named, nil
}

func (r *recorder) LockWork(context.Context, WorkParams) (*provider.WorkItemLease, error) {
	r.took = "LockWork"
	return &provider.WorkItemLease{}, nil
}

func (r *recorder) Start(context.Context, provider.StartRequest) error {
	r.took = "Start"
	return nil
}

func (r *recorder) StartLocking(context.Context, provider.StartRequest) (*provider.OrchestrationItem, error) {
	r.took = "StartLocking"
	return nil, nil
}

func (r *recorder) Turn(context.Context, provider.TurnCommit) error {
	r.took = "Turn"
	return nil
}

func (r *recorder) TurnLeasing(context.Context, provider.TurnCommit) ([]*provider.WorkItemLease, error) {
	r.took = "TurnLeasing"
	return nil, nil
}

func (r *recorder) TurnNext(context.Context, provider.TurnCommit, time.Duration) ([]*provider.WorkItemLease, *provider.OrchestrationItem, error) {
	r.took = "TurnNext"
	return nil, &provider.OrchestrationItem{}, nil
}

func (r *recorder) FirstTurn(context.Context, provider.TurnCommit) (bool, []*provider.WorkItemLease, error) {
	r.took = "FirstTurn"
	return true, nil, nil
}

func (r *recorder) CachedTurn(_ context.Context, workToken string, _ provider.TurnCommit) ([]*provider.WorkItemLease, error) {
	r.took = "CachedTurn(" + workToken + ")"
	return nil, nil
}

func (r *recorder) Activity(context.Context, string, *provider.WorkItem) error {
	r.took = "Activity"
	return nil
}

func (r *recorder) ActivityQuietly(_ context.Context, _ string, _ provider.WorkItem, q QuietCheck) (bool, error) {
	r.took, r.quiet = "ActivityQuietly", q
	return true, nil
}

func (r *recorder) ActivityNext(context.Context, string, provider.WorkItem, time.Duration) (*provider.OrchestrationItem, error) {
	r.took = "ActivityNext"
	return &provider.OrchestrationItem{}, nil
}

func (r *recorder) AbandonTurn(context.Context, AbandonParams) error {
	r.took = "AbandonTurn"
	return nil
}

func (r *recorder) RenewTurn(context.Context, provider.RenewRequest) error {
	r.took = "RenewTurn"
	return nil
}

func (r *recorder) AbandonWork(context.Context, AbandonParams) error {
	r.took = "AbandonWork"
	return nil
}

func (r *recorder) RenewWork(context.Context, provider.RenewRequest) (provider.ExecutionState, error) {
	r.took = "RenewWork"
	return provider.StateRunning, nil
}
