package providertest

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// Locking one named instance (FetchRequest.Instance), for a process that
// runs a turn no worker will.
func instanceFetchCases() []Case {
	return []Case{
		{Name: "FetchByNameLocksOnlyThatInstance", Run: fetchInstanceLocksOnlyIt},
		{Name: "FetchByNameNoneWhileLocked", Run: fetchInstanceNilWhileLocked},
		{Name: "FetchByNameNoneWithoutMessages", Run: fetchInstanceNilWithoutMessages},
	}
}

func fetchInstanceLocksOnlyIt(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.enqueue(startItem("b"))
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{Instance: "b", LockFor: longLock})
	e.must(err, "fetch instance b")
	if item == nil {
		t.Fatal("fetch instance b: nil, want its start")
	}
	e.wantEqual(item.Instance, "b", "fetched instance")
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "b's messages")
	e.ack(item, firstTurn(item))
	e.wantEqual(e.fetch().Instance, "a", "the other instance is still ready")
}

func fetchInstanceNilWhileLocked(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	held := e.fetch()
	e.enqueue(externalItem("a", "x"))
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{Instance: "a", LockFor: longLock})
	e.must(err, "fetch a locked instance")
	if item != nil {
		t.Fatalf("fetch a locked instance: got an item with token %q, want nil", item.LockToken)
	}
	e.ack(held, firstTurn(held))
}

func fetchInstanceNilWithoutMessages(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{Instance: "a", LockFor: longLock})
	e.must(err, "fetch an instance with nothing queued")
	if item != nil {
		t.Fatalf("fetch an instance with nothing queued: got %d messages, want nil", len(item.Messages))
	}
}
