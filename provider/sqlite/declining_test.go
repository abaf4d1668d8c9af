package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/providertest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
)

// decliningStore is the SQLite store as a store without any fast path
// would answer: it declines each the way the contract says a store may.
// It shows that the suite holds such a store to the contract.
type decliningStore struct{ *sqlite.Provider }

func (d decliningStore) Commit(ctx context.Context, req provider.CommitRequest) (provider.Committed, error) {
	if err := req.Validate(); err != nil {
		return provider.Committed{}, err
	}
	if t := req.Turn; t != nil {
		switch t.Hold {
		case provider.TurnNew:
			return provider.Committed{}, fmt.Errorf("commit: %w", provider.ErrUnsupported)
		case provider.TurnCached:
			return provider.Committed{}, fmt.Errorf("commit: %w", provider.ErrStale)
		}
		turn := *t
		turn.Lease, turn.LeaseFor = nil, 0
		req.Turn = &turn
	}
	if a := req.Activity; a != nil {
		activity := *a
		activity.QuietAfter = 0
		req.Activity = &activity
	}
	req.LockNextFor = 0
	return d.Provider.Commit(ctx, req)
}

func (d decliningStore) Fetch(ctx context.Context, req provider.FetchRequest) ([]*provider.OrchestrationItem, error) {
	if len(req.Deliver) > 0 {
		return nil, nil
	}
	req.FromCache = false
	return d.Provider.Fetch(ctx, req)
}

func (d decliningStore) StartInstance(ctx context.Context, req provider.StartRequest) (*provider.OrchestrationItem, error) {
	if req.LockFor > 0 && len(req.Events) == 0 {
		req.LockFor = 0
	}
	_, err := d.Provider.StartInstance(ctx, req)
	return nil, err
}

type decliningFactory struct{ fileFactory }

func (f decliningFactory) NewProvider(t testing.TB) provider.Provider {
	return decliningStore{f.fileFactory.NewProvider(t).(*sqlite.Provider)}
}

func (f decliningFactory) OpenPeer(t testing.TB, p provider.Provider) provider.Provider {
	return decliningStore{f.fileFactory.OpenPeer(t, p.(decliningStore).Provider).(*sqlite.Provider)}
}

// TestConformanceDecliningEveryFastPath runs the suite against a store that
// takes no fast path, as a third store may: the declined paths' cases give
// way to the Declined group.
func TestConformanceDecliningEveryFastPath(t *testing.T) {
	providertest.Run(t, decliningFactory{}, providertest.Declines(providertest.FastPaths()...))
}

func (f decliningFactory) CorruptHistoryEvent(t testing.TB, p provider.Provider, instance string, executionID, eventID int64) {
	f.fileFactory.CorruptHistoryEvent(t, p.(decliningStore).Provider, instance, executionID, eventID)
}

func (f decliningFactory) CorruptOrchestratorMessages(t testing.TB, p provider.Provider, instance string) {
	f.fileFactory.CorruptOrchestratorMessages(t, p.(decliningStore).Provider, instance)
}

func (f decliningFactory) CorruptWorkItems(t testing.TB, p provider.Provider, instance string) {
	f.fileFactory.CorruptWorkItems(t, p.(decliningStore).Provider, instance)
}
