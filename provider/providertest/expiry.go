package providertest

import (
	"strings"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func expiryCases() []Case {
	return []Case{
		{Name: "LockExpiresAfterTimeout", Run: lockExpiresAfterTimeout},
		{Name: "AbandonReleasesAtOnce", Run: abandonReleasesAtOnce},
		{Name: "AbandonWithDelayHidesInstance", Run: abandonWithDelayHides},
		{Name: "AbandonWithDelayReleasesAfterDelay", Run: abandonWithDelayReleases},
		{Name: "RenewExtendsLock", Run: renewExtendsLock},
		{Name: "RenewAfterExpiryFails", Run: renewAfterExpiryFails},
		{Name: "AckAfterExpiryFailsAndWritesNothing", Run: ackAfterExpiryFails},
		{Name: "AckAfterTakeoverSaysSo", Run: ackAfterTakeoverSaysSo},
		{Name: "RenewAfterAckFails", Run: renewAfterAckFails},
		{Name: "AbandonAfterAckFails", Run: abandonAfterAckFails},
		{Name: "WorkItemLockExpires", Run: workItemLockExpires},
		{Name: "WorkItemLockIsExclusive", Run: workItemLockExclusive},
		{Name: "WorkItemAbandonReleasesAtOnce", Run: workItemAbandonReleases},
		{Name: "WorkItemAbandonWithDelayHidesItem", Run: workItemAbandonDelayHides},
		{Name: "WorkItemAbandonWithDelayReleasesAfterDelay", Run: workItemAbandonDelayReleases},
		{Name: "WorkItemRenewExtendsLock", Run: workItemRenewExtends},
		{Name: "WorkItemRenewAfterExpiryFails", Run: workItemRenewAfterExpiry},
		{Name: "WorkItemAckAfterExpiryFails", Run: workItemAckAfterExpiry},
		{Name: "WorkItemAckAfterAckFails", Run: workItemAckAfterAck},
	}
}

func lockExpiresAfterTimeout(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.fetchLock(shortLock)
	time.Sleep(pastShortLock)
	e.wantEqual(e.fetch().Instance, "a", "instance after lock expiry")
}

func abandonReleasesAtOnce(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	e.wantEqual(e.fetch().Instance, "a", "instance right after abandon")
}

func abandonWithDelayHides(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken, Delay: time.Minute}), "abandon with delay")
	e.fetchNone()
	e.wantErr(AckTurn(e.ctx, e.p, item.LockToken, firstTurn(item)), provider.ErrLockNotHeld, "ack after abandon")
}

func abandonWithDelayReleases(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken, Delay: shortLock}), "abandon with delay")
	time.Sleep(pastShortLock)
	e.wantEqual(e.fetch().Instance, "a", "instance after abandon delay")
}

func renewExtendsLock(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetchLock(shortLock)
	e.must(e.p.RenewOrchestrationItemLock(e.ctx, provider.RenewRequest{LockToken: item.LockToken, ExtendFor: longLock}), "renew")
	time.Sleep(pastShortLock)
	e.fetchNone()
	e.ack(item, firstTurn(item))
}

func renewAfterExpiryFails(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetchLock(shortLock)
	time.Sleep(pastShortLock)
	e.wantErr(e.p.RenewOrchestrationItemLock(e.ctx, provider.RenewRequest{LockToken: item.LockToken, ExtendFor: longLock}), provider.ErrLockNotHeld, "renew after expiry")
}

func ackAfterExpiryFails(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetchLock(shortLock)
	time.Sleep(pastShortLock)
	e.wantErr(AckTurn(e.ctx, e.p, item.LockToken, firstTurn(item)), provider.ErrLockNotHeld, "ack after expiry")
	e.wantEqual(e.exists("a"), false, "instance created by expired ack")
	e.wantEqual(len(e.fetch().Messages), 1, "messages kept after expired ack")
}

// A turn whose lock expired and was taken by another fetch is told that,
// not that its token is "unknown".
func ackAfterTakeoverSaysSo(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	stale := e.fetchLock(shortLock)
	time.Sleep(pastShortLock)
	taker := e.fetch()
	err := AckTurn(e.ctx, e.p, stale.LockToken, firstTurn(stale))
	e.wantErr(err, provider.ErrLockNotHeld, "ack after another worker took the instance over")
	if !strings.Contains(err.Error(), "another worker took the instance over") {
		t.Fatalf("ack after takeover: %q does not say the lock expired and was taken over", err)
	}
	e.ack(taker, firstTurn(taker))
}

func renewAfterAckFails(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.ack(item, firstTurn(item))
	e.wantErr(e.p.RenewOrchestrationItemLock(e.ctx, provider.RenewRequest{LockToken: item.LockToken, ExtendFor: longLock}), provider.ErrLockNotHeld, "renew after ack")
}

func abandonAfterAckFails(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.ack(item, firstTurn(item))
	e.wantErr(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), provider.ErrLockNotHeld, "abandon after ack")
}

func workItemLockExpires(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	first := e.fetchWorkLock(shortLock)
	time.Sleep(pastShortLock)
	again := e.fetchWork()
	e.wantEqual(again.Item.ID, 1, "item after lock expiry")
	if again.LockToken == first.LockToken {
		t.Fatal("refetched item kept the expired token")
	}
}

func workItemLockExclusive(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	e.fetchWork()
	e.fetchWorkNone()
}

func workItemAbandonReleases(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWork()
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken}), "abandon")
	e.wantEqual(e.fetchWork().Item.ID, 1, "item right after abandon")
}

func workItemAbandonDelayHides(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWork()
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken, Delay: time.Minute}), "abandon with delay")
	e.fetchWorkNone()
	e.wantEqual(e.depths().Delayed, 1, "delayed items")
}

func workItemAbandonDelayReleases(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWork()
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken, Delay: shortLock}), "abandon with delay")
	time.Sleep(pastShortLock)
	e.wantEqual(e.fetchWork().Item.ID, 1, "item after abandon delay")
}

func workItemRenewExtends(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWorkLock(shortLock)
	_, err := e.p.RenewWorkItemLock(e.ctx, provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: longLock})
	e.must(err, "renew")
	time.Sleep(pastShortLock)
	e.fetchWorkNone()
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack after renewal")
}

func workItemRenewAfterExpiry(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWorkLock(shortLock)
	time.Sleep(pastShortLock)
	_, err := e.p.RenewWorkItemLock(e.ctx, provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: longLock})
	e.wantErr(err, provider.ErrLockNotHeld, "renew after expiry")
}

func workItemAckAfterExpiry(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWorkLock(shortLock)
	time.Sleep(pastShortLock)
	e.wantErr(AckActivity(e.ctx, e.p, lease.LockToken, nil), provider.ErrLockNotHeld, "ack after expiry")
	e.wantEqual(e.fetchWork().Item.ID, 1, "item still queued after expired ack")
}

func workItemAckAfterAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(activityItem("a", 1, 1))
	lease := e.fetchWork()
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 1)), "first ack")
	e.wantErr(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 1)), provider.ErrLockNotHeld, "second ack")
	e.wantEqual(e.depths().Orchestrator, 1, "completions enqueued")
}
