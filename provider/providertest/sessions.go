package providertest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func sessionCases() []Case {
	return []Case{
		{Name: "ItemsWithoutSessionGoToAnyWorker", Run: sessNonSessionToAny},
		{Name: "FetchWithoutSessionsSkipsSessionItems", Run: sessSkippedWithoutConfig},
		{Name: "UnownedSessionClaimed", Run: sessUnownedClaimed},
		{Name: "OwnerGetsTheSessionsNextItems", Run: sessOwnerGetsNext},
		{Name: "OtherWorkersSkipAnOwnedSession", Run: sessOthersSkip},
		{Name: "DifferentSessionsGoToDifferentWorkers", Run: sessDifferentWorkers},
		{Name: "MixedItemsInOrder", Run: sessMixedInOrder},
		{Name: "SessionItemsInOrder", Run: sessItemsInOrder},
		{Name: "SharedWorkerIDSharesSessions", Run: sessSharedWorkerID},
		{Name: "ConcurrentClaimsOneWins", Run: sessConcurrentClaim},
		{Name: "TakenOverAfterLeaseLapses", Run: sessTakeover},
		{Name: "OwnerReclaimsLapsedSession", Run: sessOwnerReclaims},
		{Name: "ActivityLeaseLapsedSessionLiveOwnerRefetches", Run: sessActivityLapsedOwnerRefetches},
		{Name: "SessionLapsedNewOwnerGetsRedelivery", Run: sessLapsedNewOwnerRedelivery},
		{Name: "BothLapsedAnyWorkerClaims", Run: sessBothLapsed},
		{Name: "SessionLapsedActivityLeaseLiveAckSucceeds", Run: sessLapsedAckSucceeds},
		{Name: "RenewExtendsActiveSessions", Run: sessRenewExtends},
		{Name: "RenewExtendsPastTheFirstLease", Run: sessRenewPastFirstLease},
		{Name: "RenewSkipsIdleSessions", Run: sessRenewSkipsIdle},
		{Name: "RenewWithoutSessions", Run: sessRenewNone},
		{Name: "RenewDoesNotReviveALapsedSession", Run: sessRenewNoRevive},
		{Name: "RenewOnlyTheWorkersOwn", Run: sessRenewOnlyOwn},
		{Name: "AckNotesWork", Run: sessAckNotesWork},
		{Name: "ItemRenewalNotesWork", Run: sessItemRenewNotesWork},
		{Name: "ReleaseFreesSessionsAtOnce", Run: sessRelease},
		{Name: "CleanupRemovesLapsedWithoutItems", Run: sessCleanupRemoves},
		{Name: "CleanupKeepsLapsedWithItems", Run: sessCleanupKeepsItems},
		{Name: "CleanupKeepsLiveSessions", Run: sessCleanupKeepsLive},
		{Name: "CleanupThenNewItemClaimsAgain", Run: sessCleanupThenClaim},
		{Name: "AbandonedItemRetriedByOwner", Run: sessAbandonRetried},
		{Name: "AbandonIgnoringAttempt", Run: sessAbandonIgnoreAttempt},
		{Name: "MaxSessionsCapsNewClaims", Run: sessMaxSessions},
		{Name: "SessionAndTagFiltersCombine", Run: sessWithTags},
		{Name: "SessionReadBackFromTurnAck", Run: sessFromTurnAck},
		{Name: "AckLeasingRefusesSessionItems", Run: sessNoLeaseAtAck, Path: PathLease},
		{Name: "InvalidSessionsRejected", Run: sessInvalid},
	}
}

const sessionLease = 400 * time.Millisecond

func sessItem(id int64, session string) provider.WorkItem {
	w := activityItem("a", 1, id)
	w.Session = session
	return w
}

func sessConfig(worker string) *provider.SessionConfig {
	return &provider.SessionConfig{WorkerID: worker, LockFor: longLock, MaxSessions: 10}
}

// fetchAs leases the next item worker may take under c (nil: no sessions),
// with the activity lease lockFor; nil when none.
func (e *env) fetchAs(c *provider.SessionConfig, lockFor time.Duration) *provider.WorkItemLease {
	e.t.Helper()
	lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: lockFor, Sessions: c})
	e.must(err, "fetch work item")
	return lease
}

// idsAs drains what c may take under long leases and returns the activity IDs.
func (e *env) idsAs(c *provider.SessionConfig) []int64 {
	e.t.Helper()
	var ids []int64
	for {
		lease := e.fetchAs(c, longLock)
		if lease == nil {
			return ids
		}
		ids = append(ids, lease.Item.ID)
	}
}

// lapsing is a config whose sessions lapse after sessionLease.
func lapsing(worker string) *provider.SessionConfig {
	return &provider.SessionConfig{WorkerID: worker, LockFor: sessionLease, MaxSessions: 10}
}

func pastSessionLease() { time.Sleep(sessionLease + 300*time.Millisecond) }

func sessNonSessionToAny(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, ""))
	e.enqueueWork(sessItem(2, ""))
	e.wantEqual(e.fetchAs(nil, longLock).Item.ID, 1, "a fetch without sessions")
	e.wantEqual(e.fetchAs(sessConfig("w1"), longLock).Item.ID, 2, "a fetch with sessions")
}

func sessSkippedWithoutConfig(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	e.enqueueWork(sessItem(2, ""))
	e.wantEqual(e.idsAs(nil), []int64{2}, "a fetch without sessions")
	e.wantEqual(e.idsAs(sessConfig("w1")), []int64{1}, "a fetch with sessions")
}

func sessUnownedClaimed(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(sessConfig("w1"), longLock)
	if lease == nil {
		t.Fatal("an unowned session's item was not fetched")
	}
	e.wantEqual([]any{lease.Item.ID, lease.Item.Session}, []any{1, "s"}, "the lease")
}

func sessOwnerGetsNext(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(sessConfig("w1"), longLock)
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	e.enqueueWork(sessItem(2, "s"))
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64(nil), "another worker's fetch")
	e.wantEqual(e.idsAs(sessConfig("w1")), []int64{2}, "the owner's fetch")
}

func sessOthersSkip(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	e.enqueueWork(sessItem(2, "s"))
	e.enqueueWork(sessItem(3, ""))
	e.wantEqual(e.fetchAs(sessConfig("w1"), longLock).Item.ID, 1, "w1's first fetch")
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64{3}, "w2's fetches: the item without a session only")
	e.wantEqual(e.idsAs(sessConfig("w1")), []int64{2}, "w1's fetches")
}

func sessDifferentWorkers(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s1"))
	e.enqueueWork(sessItem(2, "s2"))
	e.enqueueWork(sessItem(3, "s1"))
	e.enqueueWork(sessItem(4, "s2"))
	e.wantEqual(e.fetchAs(sessConfig("w1"), longLock).Item.ID, 1, "w1 claims s1")
	e.wantEqual(e.fetchAs(sessConfig("w2"), longLock).Item.ID, 2, "w2 claims s2")
	e.wantEqual(e.idsAs(sessConfig("w1")), []int64{3}, "w1's fetches")
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64{4}, "w2's fetches")
}

func sessMixedInOrder(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for id, s := range []string{"", "s", "", "s", ""} {
		e.enqueueWork(sessItem(int64(id+1), s))
	}
	e.wantEqual(e.idsAs(sessConfig("w1")), []int64{1, 2, 3, 4, 5}, "one worker's fetches, oldest first")
}

func sessItemsInOrder(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for id := int64(1); id <= 5; id++ {
		e.enqueueWork(sessItem(id, "s"))
	}
	e.wantEqual(e.idsAs(sessConfig("w1")), []int64{1, 2, 3, 4, 5}, "a session's items")
}

// Processes that share a worker ID share its sessions (a worker restarted
// under the same name keeps them).
func sessSharedWorkerID(t *testing.T, f Factory) {
	e := newEnv(t, f)
	peer := e.f.OpenPeer(t, e.p)
	e.enqueueWork(sessItem(1, "s"))
	e.enqueueWork(sessItem(2, "s"))
	e.wantEqual(e.fetchAs(sessConfig("pod-0"), longLock).Item.ID, 1, "the first process's fetch")
	lease, err := peer.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, Sessions: sessConfig("pod-0")})
	e.must(err, "the peer's fetch")
	if lease == nil || lease.Item.ID != 2 {
		t.Fatalf("a peer with the same worker ID got %+v, want activity 2", lease)
	}
}

func sessConcurrentClaim(t *testing.T, f Factory) {
	e := newEnv(t, f)
	const n = 12
	for id := int64(1); id <= n; id++ {
		e.enqueueWork(sessItem(id, "s"))
	}
	got := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		worker := fmt.Sprint("w", w)
		wg.Go(func() {
			for {
				lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, Sessions: sessConfig(worker)})
				if err != nil {
					t.Error(err)
					return
				}
				if lease == nil {
					return
				}
				mu.Lock()
				got[worker]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for _, k := range got {
		total += k
	}
	if len(got) != 1 || total != n {
		t.Fatalf("items fetched by worker: %v; want all %d by one worker", got, n)
	}
}

func sessTakeover(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(lapsing("w1"), longLock)
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	e.enqueueWork(sessItem(2, "s"))
	e.wantEqual(e.idsAs(lapsing("w2")), []int64(nil), "w2's fetch while w1 owns the session")
	pastSessionLease()
	e.wantEqual(e.idsAs(lapsing("w2")), []int64{2}, "w2's fetch once w1's lease lapsed")
	e.enqueueWork(sessItem(3, "s"))
	e.wantEqual(e.idsAs(lapsing("w1")), []int64(nil), "w1's fetch once w2 took over")
}

func sessOwnerReclaims(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(lapsing("w1"), longLock)
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	pastSessionLease()
	e.enqueueWork(sessItem(2, "s"))
	e.wantEqual(e.idsAs(lapsing("w1")), []int64{2}, "the former owner's fetch")
}

// The activity's lease lapsed, the session's did not: its owner fetches
// the item again, nobody else.
func sessActivityLapsedOwnerRefetches(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	first := e.fetchAs(sessConfig("w1"), shortLock)
	time.Sleep(pastShortLock)
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64(nil), "another worker's fetch")
	again := e.fetchAs(sessConfig("w1"), longLock)
	if again == nil || again.Item.ID != 1 || again.AttemptCount != 2 {
		t.Fatalf("the owner's fetch got %+v, want activity 1 on attempt 2", again)
	}
	e.wantErr(AckActivity(e.ctx, e.p, first.LockToken, nil), provider.ErrLockNotHeld, "the lapsed lease's ack")
}

func sessLapsedNewOwnerRedelivery(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	e.fetchAs(lapsing("w1"), shortLock)
	pastSessionLease()
	lease := e.fetchAs(lapsing("w2"), longLock)
	if lease == nil || lease.Item.ID != 1 || lease.AttemptCount != 2 {
		t.Fatalf("the new owner got %+v, want activity 1 again", lease)
	}
}

func sessBothLapsed(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	e.fetchAs(lapsing("w1"), shortLock)
	pastSessionLease()
	e.wantEqual(e.idsAs(lapsing("w3")), []int64{1}, "any worker's fetch once both leases lapsed")
}

// A session that lapsed while its activity runs does not take the
// activity's lease: its ack still succeeds.
func sessLapsedAckSucceeds(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(lapsing("w1"), longLock)
	pastSessionLease()
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "the ack after the session lapsed")
	e.wantEqual(e.depths().Worker+e.depths().Locked, 0, "items left")
}

func (e *env) renew(worker string, extend, idle time.Duration) int {
	e.t.Helper()
	n, err := e.p.RenewSessions(e.ctx, provider.RenewSessionsRequest{WorkerID: worker, ExtendFor: extend, IdleAfter: idle})
	e.must(err, "renew sessions of "+worker)
	return n
}

func sessRenewExtends(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s1"))
	e.enqueueWork(sessItem(2, "s2"))
	e.fetchAs(lapsing("w1"), longLock)
	e.fetchAs(lapsing("w1"), longLock)
	e.wantEqual(e.renew("w1", longLock, time.Minute), 2, "sessions renewed")
	pastSessionLease()
	e.enqueueWork(sessItem(3, "s1"))
	e.wantEqual(e.idsAs(lapsing("w2")), []int64(nil), "another worker's fetch after the first lease would have lapsed")
}

func sessRenewPastFirstLease(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	e.fetchAs(lapsing("w1"), longLock)
	for range 3 {
		time.Sleep(sessionLease / 2)
		e.wantEqual(e.renew("w1", sessionLease, time.Minute), 1, "sessions renewed")
	}
	e.enqueueWork(sessItem(2, "s"))
	e.wantEqual(e.idsAs(lapsing("w2")), []int64(nil), "another worker's fetch after 1.5 first leases")
}

// A session whose last work is older than IdleAfter is not renewed: it
// lapses and frees its worker.
func sessRenewSkipsIdle(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(sessConfig("w1"), longLock)
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	time.Sleep(300 * time.Millisecond)
	e.wantEqual(e.renew("w1", longLock, 100*time.Millisecond), 0, "idle sessions renewed")
	e.wantEqual(e.renew("w1", longLock, time.Minute), 1, "sessions with recent work renewed")
}

func sessRenewNone(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.wantEqual(e.renew("w1", longLock, time.Minute), 0, "sessions renewed for a worker without any")
}

func sessRenewNoRevive(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	e.fetchAs(lapsing("w1"), longLock)
	pastSessionLease()
	e.wantEqual(e.renew("w1", longLock, time.Minute), 0, "lapsed sessions renewed")
	e.enqueueWork(sessItem(2, "s"))
	e.wantEqual(e.idsAs(lapsing("w2")), []int64{2}, "another worker's fetch of the lapsed session")
}

func sessRenewOnlyOwn(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s1"))
	e.enqueueWork(sessItem(2, "s2"))
	e.fetchAs(lapsing("w1"), longLock)
	e.fetchAs(lapsing("w2"), longLock)
	e.wantEqual(e.renew("w1", longLock, time.Minute), 1, "w1's sessions renewed")
	pastSessionLease()
	e.enqueueWork(sessItem(3, "s2"))
	e.wantEqual(e.idsAs(lapsing("w3")), []int64{3}, "w2's session, not renewed by w1, taken by w3")
}

func sessAckNotesWork(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(sessConfig("w1"), longLock)
	time.Sleep(400 * time.Millisecond)
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	e.wantEqual(e.renew("w1", longLock, 300*time.Millisecond), 1, "sessions renewed after an ack 0s ago (idle after 300ms)")
}

func sessItemRenewNotesWork(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(sessConfig("w1"), longLock)
	time.Sleep(400 * time.Millisecond)
	_, err := e.p.RenewWorkItemLock(e.ctx, provider.RenewRequest{LockToken: lease.LockToken, ExtendFor: longLock})
	e.must(err, "renew the item's lease")
	e.wantEqual(e.renew("w1", longLock, 300*time.Millisecond), 1, "sessions renewed after an item renewal 0s ago (idle after 300ms)")
}

func sessRelease(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s1"))
	e.enqueueWork(sessItem(2, "s2"))
	e.fetchAs(sessConfig("w1"), longLock)
	e.fetchAs(sessConfig("w1"), longLock)
	n, err := e.p.ReleaseSessions(e.ctx, provider.WorkerRequest{ID: "w1"})
	e.must(err, "release")
	e.wantEqual(n, 2, "sessions released")
	e.enqueueWork(sessItem(3, "s1"))
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64{3}, "another worker's fetch right after the release")
}

func (e *env) cleanup() int {
	e.t.Helper()
	n, err := e.p.CleanupSessions(e.ctx)
	e.must(err, "clean up sessions")
	return n
}

func sessCleanupRemoves(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(lapsing("w1"), longLock)
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	pastSessionLease()
	e.wantEqual(e.cleanup(), 1, "sessions cleaned up")
	e.wantEqual(e.cleanup(), 0, "sessions cleaned up again")
}

func sessCleanupKeepsItems(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	e.fetchAs(lapsing("w1"), shortLock)
	pastSessionLease()
	e.wantEqual(e.cleanup(), 0, "sessions cleaned up while an item waits")
}

func sessCleanupKeepsLive(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(sessConfig("w1"), longLock)
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	e.wantEqual(e.cleanup(), 0, "live sessions cleaned up")
	e.enqueueWork(sessItem(2, "s"))
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64(nil), "another worker's fetch after the cleanup")
}

func sessCleanupThenClaim(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(lapsing("w1"), longLock)
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	pastSessionLease()
	e.wantEqual(e.cleanup(), 1, "sessions cleaned up")
	e.enqueueWork(sessItem(2, "s"))
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64{2}, "a new claim after the cleanup")
	e.enqueueWork(sessItem(3, "s"))
	e.wantEqual(e.idsAs(sessConfig("w1")), []int64(nil), "the old owner's fetch")
}

func sessAbandonRetried(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(sessConfig("w1"), longLock)
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken}), "abandon")
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64(nil), "another worker's fetch after the abandon")
	again := e.fetchAs(sessConfig("w1"), longLock)
	if again == nil || again.AttemptCount != 2 {
		t.Fatalf("the owner's fetch after the abandon: %+v, want attempt 2", again)
	}
}

func sessAbandonIgnoreAttempt(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(sessItem(1, "s"))
	lease := e.fetchAs(sessConfig("w1"), longLock)
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken, IgnoreAttempt: true}), "abandon")
	again := e.fetchAs(sessConfig("w1"), longLock)
	if again == nil || again.AttemptCount != 1 {
		t.Fatalf("the owner's fetch after an abandon not counted: %+v, want attempt 1", again)
	}
}

func sessMaxSessions(t *testing.T, f Factory) {
	e := newEnv(t, f)
	capped := &provider.SessionConfig{WorkerID: "w1", LockFor: longLock, MaxSessions: 2}
	for id, s := range []string{"s1", "s2", "s3", "", "s1"} {
		e.enqueueWork(sessItem(int64(id+1), s))
	}
	e.wantEqual(e.idsAs(capped), []int64{1, 2, 4, 5}, "a worker capped at 2 sessions: its two, then no third")
	e.wantEqual(e.idsAs(sessConfig("w2")), []int64{3}, "another worker's fetch")
}

func sessWithTags(t *testing.T, f Factory) {
	e := newEnv(t, f)
	w := sessItem(1, "s")
	w.Tag = "gpu"
	e.enqueueWork(w)
	e.wantEqual(e.idsAs(sessConfig("w1")), []int64(nil), "an untagged fetch with sessions")
	lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, Sessions: sessConfig("w1"),
		Tags: provider.TagFilter{Tags: []string{"gpu"}}})
	e.must(err, "a gpu fetch with sessions")
	if lease == nil || lease.Item.Session != "s" || lease.Item.Tag != "gpu" {
		t.Fatalf("a gpu fetch with sessions got %+v", lease)
	}
}

func sessFromTurnAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		w := activityItem("a", item.ExecutionID, 2)
		w.Session = "s"
		ack.WorkerItems = []provider.WorkItem{w}
	})
	e.wantEqual(e.idsAs(nil), []int64(nil), "a fetch without sessions")
	lease := e.fetchAs(sessConfig("w1"), longLock)
	if lease == nil || lease.Item.Session != "s" || lease.Item.ID != 2 {
		t.Fatalf("a fetch with sessions got %+v", lease)
	}
}

func sessNoLeaseAtAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchInstance("a")
	w := activityItem("a", item.ExecutionID, 2)
	w.Session = "s"
	_, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
		HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}, WorkerItems: []provider.WorkItem{w}}, []int{0}, longLock)
	e.wantErr(err, provider.ErrInvalidArgument, "an ack leasing a session's activity")
	e.wantEqual(len(e.history("a")), 1, "events after the refused ack")
}

func sessInvalid(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for what, c := range map[string]*provider.SessionConfig{
		"no worker ID":   {LockFor: longLock, MaxSessions: 1},
		"no lease":       {WorkerID: "w", MaxSessions: 1},
		"no session cap": {WorkerID: "w", LockFor: longLock},
	} {
		_, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, Sessions: c})
		e.wantErr(err, provider.ErrInvalidArgument, "a fetch with "+what)
	}
	e.wantErr(e.p.EnqueueForWorker(e.ctx, provider.EnqueueRequest{Item: sessItem(1, strings.Repeat("s", provider.MaxSessionIDBytes+1))}),
		provider.ErrInvalidArgument, "an item with a session ID over the limit")
	_, err := e.p.RenewSessions(e.ctx, provider.RenewSessionsRequest{WorkerID: "w", ExtendFor: 0, IdleAfter: time.Minute})
	e.wantErr(err, provider.ErrInvalidArgument, "a renewal without a lease")
	_, err = e.p.ReleaseSessions(e.ctx, provider.WorkerRequest{})
	e.wantErr(err, provider.ErrInvalidArgument, "a release without a worker")
}
