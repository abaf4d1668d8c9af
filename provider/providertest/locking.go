package providertest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func lockingCases() []Case {
	return []Case{
		{Name: "FetchLocksInstanceExclusively", Run: fetchLocksExclusively},
		{Name: "LockTokensAreUnique", Run: lockTokensUnique},
		{Name: "ConcurrentFetchersNeverShareAnInstance", Run: concurrentFetchersDisjoint},
		{Name: "MessagesArrivingDuringLockWaitForNextTurn", Run: lateMessagesWait},
		{Name: "AckDeletesOnlyMessagesFetchedUnderItsToken", Run: ackDeletesOnlyFetched},
		{Name: "LocksArePerInstance", Run: locksPerInstance},
		{Name: "AllVisibleMessagesDeliveredInOneTurn", Run: allMessagesOneTurn},
		{Name: "MessagesDeliveredInEnqueueOrder", Run: messagesInOrder},
		{Name: "InstancesServedInArrivalOrder", Run: instancesInArrivalOrder},
		{Name: "RecoveryAfterLockExpiry", Run: recoveryAfterExpiry},
		{Name: "OldTokenInvalidAfterTakeover", Run: oldTokenInvalidAfterTakeover},
		{Name: "AbandonMakesInstanceAvailable", Run: abandonMakesAvailable},
		{Name: "LockedInstanceSkippedOthersServed", Run: lockedSkippedOthersServed},
	}
}

func fetchLocksExclusively(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.fetch()
	e.enqueue(externalItem("a", "more"))
	e.fetchNone()
}

func lockTokensUnique(t *testing.T, f Factory) {
	e := newEnv(t, f)
	const n = 20
	for i := range n {
		e.enqueue(startItem(fmt.Sprintf("i%02d", i)))
	}
	seen := map[string]bool{}
	for range n {
		seen[e.fetch().LockToken] = true
	}
	e.wantEqual(len(seen), n, "distinct lock tokens")
}

func concurrentFetchersDisjoint(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	var got atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{LockFor: longLock, PollFor: 0})
			if err != nil {
				t.Errorf("fetch: %v", err)
			}
			if item != nil {
				got.Add(1)
			}
		})
	}
	wg.Wait()
	e.wantEqual(got.Load(), 1, "fetchers that got the instance")
}

func lateMessagesWait(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.enqueue(externalItem("a", "late"))
	e.fetchNone()
	e.ack(item, firstTurn(item))
	next := e.fetch()
	e.wantEqual(len(next.Messages), 1, "messages in next turn")
	e.wantEqual(next.Messages[0].Name, "late", "message in next turn")
}

func ackDeletesOnlyFetched(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "first"))
	item := e.fetch()
	for i := range 3 {
		e.enqueue(externalItem("a", fmt.Sprintf("late%d", i)))
	}
	e.ack(item, provider.OrchestrationAck{ExecutionID: 1})
	e.wantEqual(e.depths().Orchestrator, 3, "messages left after ack")
	next := e.fetch()
	e.wantEqual(len(next.Messages), 3, "late messages in next turn")
}

func locksPerInstance(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.enqueue(startItem("b"))
	first, second := e.fetch(), e.fetch()
	e.wantEqual([]string{first.Instance, second.Instance}, []string{"a", "b"}, "instances locked side by side")
}

func allMessagesOneTurn(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	for i := range 10 {
		e.enqueue(externalItem("a", fmt.Sprintf("e%d", i)))
	}
	item := e.fetch()
	e.wantEqual(len(item.Messages), 10, "messages in one turn")
	e.ack(item, provider.OrchestrationAck{ExecutionID: 1})
	e.fetchNone()
}

func messagesInOrder(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	var want []string
	for i := range 5 {
		name := fmt.Sprintf("e%d", i)
		want = append(want, name)
		e.enqueue(externalItem("a", name))
	}
	var got []string
	for _, m := range e.fetch().Messages {
		got = append(got, m.Name)
	}
	e.wantEqual(got, want, "message order")
}

func instancesInArrivalOrder(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, id := range []string{"c", "a", "b"} {
		e.enqueue(startItem(id))
	}
	got := []string{e.fetch().Instance, e.fetch().Instance, e.fetch().Instance}
	e.wantEqual(got, []string{"c", "a", "b"}, "fetch order")
}

func recoveryAfterExpiry(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	crashed := e.fetchLock(shortLock)
	time.Sleep(pastShortLock)
	item := e.fetch()
	e.wantEqual(item.Instance, "a", "instance after expiry")
	if item.LockToken == crashed.LockToken {
		t.Fatal("recovered item has the crashed holder's token")
	}
	e.wantEqual(kinds(item.Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "messages after expiry")
	e.ack(item, firstTurn(item))
	e.wantEqual(e.exists("a"), true, "instance created by recovering holder")
}

func oldTokenInvalidAfterTakeover(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	crashed := e.fetchLock(shortLock)
	time.Sleep(pastShortLock)
	item := e.fetch()
	e.wantErr(AckTurn(e.ctx, e.p, crashed.LockToken, firstTurn(crashed)), provider.ErrLockNotHeld, "ack with old token")
	e.wantErr(e.p.RenewOrchestrationItemLock(e.ctx, provider.RenewRequest{LockToken: crashed.LockToken, ExtendFor: time.Minute}), provider.ErrLockNotHeld, "renew with old token")
	e.wantErr(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: crashed.LockToken}), provider.ErrLockNotHeld, "abandon with old token")
	e.ack(item, firstTurn(item))
}

func abandonMakesAvailable(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	again := e.fetch()
	e.wantEqual(len(again.Messages), 1, "messages after abandon")
}

func lockedSkippedOthersServed(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.fetch()
	e.enqueue(externalItem("a", "more"))
	e.enqueue(startItem("b"))
	e.wantEqual(e.fetch().Instance, "b", "instance served while a is locked")
}
