package providertest

import (
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// declineCases prove, for each fast path a store declines (Declines), that
// it gives the contract's declining answer and loses nothing: what the path
// would have handed over is left for the usual fetch.
func declineCases() []Case {
	return []Case{
		{Name: "LeaseDeclinedQueuesTheActivities", Run: leaseDeclined, Path: PathLease},
		{Name: "NextTurnDeclinedLeavesTheTurnQueued", Run: nextTurnDeclined, Path: PathNextTurn},
		{Name: "NextTurnOfAResultDeclinedQueuesTheResult", Run: nextTurnOfResultDeclined, Path: PathNextTurn},
		{Name: "DirectStartDeclinedWritesNothing", Run: directStartDeclined, Path: PathDirectStart},
		{Name: "EagerStartDeclinedQueuesTheStart", Run: eagerStartDeclined, Path: PathEagerStart},
		{Name: "CachedTurnDeclinedGivesNone", Run: cachedTurnDeclined, Path: PathCachedTurn},
		{Name: "QuietAckDeclinedWakesTheTurn", Run: quietAckDeclined, Path: PathQuiet},
	}
}

func leaseDeclined(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	leases, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, scheduleTurn(item), []int{0, 2}, longLock)
	e.must(err, "ack a's first turn, leasing")
	e.wantEqual(len(leases), 0, "leases of a store that declines leasing")
	e.wantEqual(len(e.history("a")), 1, "a's history: the turn committed")
	var got []int64
	for range 3 {
		got = append(got, e.fetchWork().Item.ID)
	}
	e.wantEqual(len(got), 3, "activities any worker fetches")
	e.fetchWorkNone()
}

func nextTurnDeclined(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	item := e.fetch()
	e.enqueue(externalItem("a", "x")) // arrives while the turn runs
	leases, next, err := AckTurnNext(e.ctx, e.p, "a", item.LockToken, firstTurn(item), nil, 0, longLock)
	e.must(err, "ack a's first turn, asking for its next")
	if next != nil || len(leases) != 0 {
		t.Fatalf("a store that declines next turns returned next %v, leases %v", next, leases)
	}
	later := e.fetch()
	e.wantEqual(kinds(later.Messages), []provider.WorkItemKind{provider.WorkExternalRaised}, "the next turn a fetch finds")
	e.wantEqual(eventIDs(later.History), []int64{1}, "its history")
}

func nextTurnOfResultDeclined(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	next, err := AckActivityNext(e.ctx, e.p, lease.LockToken, *completionItem("a", 1, 2), longLock)
	e.must(err, "ack the activity, asking for its instance's turn")
	if next != nil {
		t.Fatalf("a store that declines next turns returned %v", next)
	}
	e.wantResultQueued()
}

func directStartDeclined(t *testing.T, f Factory) {
	e := newEnv(t, f)
	created, leases, err := CommitFirstTurn(e.ctx, e.p, "a", directFirstTurn("a"), []int{1}, longLock)
	e.wantErr(err, provider.ErrUnsupported, "a direct start of a store that declines them")
	if created || len(leases) != 0 {
		t.Fatalf("declined direct start reported created %v, leases %v", created, leases)
	}
	e.wantEqual(e.exists("a"), false, "a exists after the declined direct start")
	e.fetchNone()
	e.must(Start(e.ctx, e.p, startItem("a"), nil, provider.IDReuseFail), "queue a's start instead")
	e.wantEqual(kinds(e.fetch().Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "the start a fetch finds")
}

func eagerStartDeclined(t *testing.T, f Factory) {
	e := newEnv(t, f)
	turn, err := StartLocking(e.ctx, e.p, startItem("a"), provider.IDReuseFail, longLock)
	e.must(err, "start a eagerly")
	if turn != nil {
		t.Fatalf("a store that declines eager starts returned a turn of %s", turn.Instance)
	}
	_, err = StartLocking(e.ctx, e.p, startItem("a"), provider.IDReuseFail, longLock)
	e.wantErr(err, provider.ErrAlreadyExists, "a second eager start of a")
	e.wantEqual(kinds(e.fetch().Messages), []provider.WorkItemKind{provider.WorkStartOrchestration}, "the start a fetch finds")
}

func cachedTurnDeclined(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	due := time.Now().Add(100 * time.Millisecond)
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.OrchestratorItems = []provider.WorkItem{timerItem("a", item.ExecutionID, 3, due)}
		ack.WorkerItems = []provider.WorkItem{activityItem("a", item.ExecutionID, 4)}
	})
	lease := e.fetchWork()
	if turn := CachedTurn(e.p, "a", 1, *completionItem("a", 1, 4)); turn != nil {
		t.Fatal("a store that declines cached turns delivered one")
	}
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, completionItem("a", 1, 4)), "ack the activity")
	time.Sleep(time.Until(due))
	items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 10, LockFor: longLock, PollFor: 5 * time.Second, FromCache: true})
	e.must(err, "fetch from the cache")
	for _, item := range items {
		if item.Cached {
			t.Fatal("a store that declines cached turns returned one from a fetch")
		}
	}
	if len(items) != 1 || len(items[0].Messages) != 2 {
		t.Fatalf("fetched %d turns, want a's with the result and the timer", len(items))
	}
}

func quietAckDeclined(t *testing.T, f Factory) {
	e := newEnv(t, f)
	startWithActivity(e)
	lease := e.fetchWork()
	e.wantEqual(e.ackQuietly(lease, 1), false, "quiet, from a store that declines quiet acks")
	e.wantResultQueued()
}
