package providertest

import (
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func versionCases() []Case {
	return []Case{
		{Name: "NoCapabilityTakesAny", Run: capNoneTakesAny},
		{Name: "AdmittedVersionFetched", Run: capAdmittedFetched},
		{Name: "OtherVersionSkipped", Run: capOtherVersionSkipped},
		{Name: "OtherNameSkipped", Run: capOtherNameSkipped},
		{Name: "SkipsIncompatibleTakesCompatible", Run: capSkipsIncompatibleTakesCompatible},
		{Name: "SkippedInstanceNotLocked", Run: capSkippedNotLocked},
		{Name: "SkippedMessagesStayQueued", Run: capSkippedMessagesStay},
		{Name: "QueuedStartAdmittedByItsVersion", Run: capQueuedStartByVersion},
		{Name: "QueuedStartWithoutVersionAdmittedByName", Run: capQueuedStartByName},
		{Name: "EventsOfASkippedStartDoNotAdmitIt", Run: capStartEventsDoNotAdmit},
		{Name: "SubOrchestrationStartFiltered", Run: capChildStartFiltered},
		{Name: "MessagesForNoInstanceAdmitted", Run: capOrphanAdmitted},
		{Name: "EmptyCapabilityTakesNothingItCannotRun", Run: capEmptyTakesNothing},
		{Name: "PinnedByFirstTurn", Run: capPinnedByFirstTurn},
		{Name: "PinImmutableWithinExecution", Run: capPinImmutable},
		{Name: "RepinnedPerContinueAsNew", Run: capRepinnedPerContinueAsNew},
		{Name: "UnpinnedAdmittedByName", Run: capUnpinnedAdmittedByName},
		{Name: "VersionSpellingsMatch", Run: capVersionSpellings},
		{Name: "PrereleaseIsItsOwnVersion", Run: capPrerelease},
		{Name: "NamedFetchIgnoresCapability", Run: capNamedFetchIgnores},
		{Name: "AbandonedInstanceStillFiltered", Run: capAbandonedStillFiltered},
		{Name: "LongPollWithOnlyIncompatibleWorkTimesOut", Run: capLongPollTimesOut},
		{Name: "PeersWithDisjointCapabilities", Run: capPeersDisjoint},
		{Name: "ConcurrentFilteredFetchersNeverShare", Run: capConcurrentNoDoubleLock},
		{Name: "InvalidCapabilityRejected", Run: capInvalidRejected},
	}
}

// createPinned starts instance at version and acks its first turn, which
// pins it.
func (e *env) createPinned(instance, version string) {
	e.t.Helper()
	start := startItem(instance)
	start.Version = version
	e.enqueue(start)
	item := e.fetchInstance(instance)
	e.ack(item, firstTurn(item))
}

func capOf(name string, versions ...string) *provider.Capability {
	return &provider.Capability{Orchestrations: map[string][]string{name: versions}}
}

// fetchWith fetches up to max turns with c and returns their instances.
func (e *env) fetchWith(c *provider.Capability, max int) []*provider.OrchestrationItem {
	e.t.Helper()
	items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: max, LockFor: longLock, Capability: c})
	e.must(err, "fetch with a capability")
	return items
}

// sortedInstances are the items' instances, sorted.
func sortedInstances(items []*provider.OrchestrationItem) []string {
	out := instancesOf(items)
	sortStrings(out)
	return out
}

// tick queues an event for each instance, so each has a turn ready.
func (e *env) tick(instances ...string) {
	e.t.Helper()
	for _, id := range instances {
		e.enqueue(externalItem(id, "tick"))
	}
}

func capNoneTakesAny(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.createPinned("b", "7.0.0")
	e.tick("a", "b")
	e.wantEqual(sortedInstances(e.fetchWith(nil, 10)), []string{"a", "b"}, "a fetch without a capability")
}

func capAdmittedFetched(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "1.0.0", "2.0.0"), 10)), []string{"a"}, "a fetch admitting 1.0.0")
}

func capOtherVersionSkipped(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "2.0.0"), 10)), []string{}, "a fetch admitting 2.0.0 only")
}

func capOtherNameSkipped(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	e.wantEqual(sortedInstances(e.fetchWith(capOf("Other", "1.0.0"), 10)), []string{}, "a fetch admitting another orchestration")
}

func capSkipsIncompatibleTakesCompatible(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("old-1", "1.0.0")
	e.createPinned("new-1", "2.0.0")
	e.createPinned("old-2", "1.0.0")
	e.createPinned("new-2", "2.0.0")
	e.tick("old-1", "new-1", "old-2", "new-2")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "2.0.0"), 10)), []string{"new-1", "new-2"}, "a 2.0.0 fetch")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "1.0.0"), 10)), []string{"old-1", "old-2"}, "a 1.0.0 fetch")
}

// What a filtered fetch skips is not locked and gets no attempt.
func capSkippedNotLocked(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	e.fetchWith(capOf(orchName, "2.0.0"), 10)
	item := e.fetch()
	e.wantEqual([]any{item.Instance, item.AttemptCount}, []any{"a", 1}, "the skipped instance, fetched unfiltered")
}

func capSkippedMessagesStay(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	before := e.depths()
	e.fetchWith(capOf(orchName, "2.0.0"), 10)
	e.wantEqual(e.depths(), before, "queue depths after a fetch that skipped everything")
}

func capQueuedStartByVersion(t *testing.T, f Factory) {
	e := newEnv(t, f)
	start := startItem("new")
	start.Version = "9.0.0"
	e.enqueue(start)
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "1.0.0"), 10)), []string{}, "a 1.0.0 fetch of a start asking for 9.0.0")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "1.0.0", "9.0.0"), 10)), []string{"new"}, "a fetch admitting 9.0.0")
}

func capQueuedStartByName(t *testing.T, f Factory) {
	e := newEnv(t, f)
	start := startItem("new")
	start.Version = ""
	e.must(Start(e.ctx, e.p, start, nil, provider.IDReuseFail), "start")
	e.wantEqual(sortedInstances(e.fetchWith(capOf("Other", "1.0.0"), 10)), []string{}, "a fetch admitting another orchestration")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "4.0.0"), 10)), []string{"new"}, "a fetch admitting its orchestration")
}

// A start queued with events: the events, which name no orchestration, do
// not make a fetch take the start.
func capStartEventsDoNotAdmit(t *testing.T, f Factory) {
	e := newEnv(t, f)
	start := startItem("new")
	start.Version = "9.0.0"
	e.must(Start(e.ctx, e.p, start, []provider.WorkItem{externalItem("new", "first")}, provider.IDReuseFail), "start with an event")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "1.0.0"), 10)), []string{}, "a 1.0.0 fetch")
	item := e.fetchWith(capOf(orchName, "9.0.0"), 10)
	e.wantEqual(len(item), 1, "turns of a 9.0.0 fetch")
	e.wantEqual(kinds(item[0].Messages), []provider.WorkItemKind{provider.WorkStartOrchestration, provider.WorkExternalRaised}, "its messages")
}

func capChildStartFiltered(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("parent", "1.0.0")
	e.turn("parent", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.OrchestratorItems = []provider.WorkItem{{Kind: provider.WorkStartOrchestration, Instance: "child", Name: "Child",
			Version: "2.0.0", ExecutionID: 1, ParentInstance: "parent", ParentExecutionID: item.ExecutionID, ParentID: 2}}
	})
	e.wantEqual(sortedInstances(e.fetchWith(capOf("Child", "1.0.0"), 10)), []string{}, "a fetch admitting Child 1.0.0")
	e.wantEqual(sortedInstances(e.fetchWith(capOf("Child", "2.0.0"), 10)), []string{"child"}, "a fetch admitting Child 2.0.0")
}

// A message for no instance and no start is admitted: its turn drops it.
func capOrphanAdmitted(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(externalItem("ghost", "late"))
	e.wantEqual(sortedInstances(e.fetchWith(capOf("Other", "1.0.0"), 10)), []string{"ghost"}, "a fetch of a message for no instance")
}

func capEmptyTakesNothing(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	e.enqueue(startItem("queued"))
	e.wantEqual(sortedInstances(e.fetchWith(&provider.Capability{}, 10)), []string{}, "a fetch admitting no orchestration")
	e.wantEqual(e.depths().Orchestrator, 2, "messages left queued")
}

func capPinnedByFirstTurn(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "3.1.4")
	e.wantEqual(e.info("a").Version, "3.1.4", "pinned version")
}

// A later turn of the execution that names another version does not move
// the pin.
func capPinImmutable(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.turn("a", func(_ *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.Metadata.OrchestrationName, ack.Metadata.OrchestrationVersion = orchName, "2.0.0"
	})
	e.wantEqual(e.info("a").Version, "1.0.0", "pinned version after a later turn named another")
	e.tick("a")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "2.0.0"), 10)), []string{}, "a 2.0.0 fetch")
}

func capRepinnedPerContinueAsNew(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		ack.HistoryDelta = append(ack.HistoryDelta, event(item, 2, provider.EventOrchestrationContinuedAsNew))
		ack.Metadata.Status, ack.Metadata.Output = provider.StatusContinuedAsNew, `"next"`
		ack.OrchestratorItems = []provider.WorkItem{{Kind: provider.WorkContinueAsNew, Instance: "a", Name: orchName, Version: "2.0.0", Input: `"next"`}}
	})
	// The next execution's first turn still runs under the old pin.
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "2.0.0"), 10)), []string{}, "a 2.0.0 fetch before the new execution began")
	item := e.fetchInstance("a")
	e.ack(item, provider.OrchestrationAck{ExecutionID: item.ExecutionID + 1,
		HistoryDelta: []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted, Name: orchName, Version: "2.0.0"}},
		Metadata:     provider.ExecutionMetadata{OrchestrationName: orchName, OrchestrationVersion: "2.0.0"}})
	e.wantEqual(e.info("a").Version, "2.0.0", "version pinned by the new execution")
	e.tick("a")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "1.0.0"), 10)), []string{}, "a 1.0.0 fetch after the repin")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "2.0.0"), 10)), []string{"a"}, "a 2.0.0 fetch after the repin")
}

// An instance whose first turn pinned no version runs under any version of
// its orchestration.
func capUnpinnedAdmittedByName(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "")
	e.tick("a")
	e.wantEqual(sortedInstances(e.fetchWith(capOf("Other", "1.0.0"), 10)), []string{}, "a fetch admitting another orchestration")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "5.0.0"), 10)), []string{"a"}, "a fetch admitting its orchestration")
}

func capVersionSpellings(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("bare", "1.2.0")
	e.createPinned("prefixed", "v2.1.0")
	e.tick("bare", "prefixed")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "v1.2.0", "2.1"), 10)), []string{"bare", "prefixed"},
		"a fetch spelling the versions otherwise")
}

func capPrerelease(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "2.0.0-rc.1")
	e.tick("a")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "2.0.0"), 10)), []string{}, "a 2.0.0 fetch")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "2.0.0-rc.1"), 10)), []string{"a"}, "a 2.0.0-rc.1 fetch")
}

func capNamedFetchIgnores(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 1, LockFor: longLock, Instance: "a", Capability: capOf(orchName, "2.0.0")})
	e.must(err, "named fetch")
	e.wantEqual(sortedInstances(items), []string{"a"}, "a named fetch with another capability")
}

func capAbandonedStillFiltered(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	item := e.fetch()
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: item.LockToken}), "abandon")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "2.0.0"), 10)), []string{}, "a 2.0.0 fetch after the abandon")
	e.wantEqual(sortedInstances(e.fetchWith(capOf(orchName, "1.0.0"), 10)), []string{"a"}, "a 1.0.0 fetch after the abandon")
}

func capLongPollTimesOut(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.createPinned("a", "1.0.0")
	e.tick("a")
	began := time.Now()
	items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 4, LockFor: longLock, PollFor: 400 * time.Millisecond, Capability: capOf(orchName, "2.0.0")})
	e.must(err, "long poll")
	e.wantEqual(len(items), 0, "turns a long poll admitting only 2.0.0 got")
	if waited := time.Since(began); waited > 10*time.Second {
		t.Fatalf("a long poll of 400ms returned after %v", waited)
	}
}

// Two builds on one store, each fetching with its own capability, take
// only their own instances however their fetches interleave.
func capPeersDisjoint(t *testing.T, f Factory) {
	e := newEnv(t, f)
	peer := e.f.OpenPeer(t, e.p)
	const n = 6
	var all []string
	for i := range n {
		for _, v := range []string{"1.0.0", "2.0.0"} {
			id := v + "-" + string(rune('a'+i))
			e.createPinned(id, v)
			all = append(all, id)
		}
	}
	e.tick(all...)
	got := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, side := range []struct {
		p       provider.Provider
		version string
	}{{e.p, "1.0.0"}, {peer, "2.0.0"}} {
		wg.Go(func() {
			for {
				items, err := side.p.Fetch(e.ctx, provider.FetchRequest{Max: 2, LockFor: longLock, Capability: capOf(orchName, side.version)})
				if err != nil {
					t.Error(err)
					return
				}
				if len(items) == 0 {
					return
				}
				mu.Lock()
				for _, it := range items {
					got[side.version] = append(got[side.version], it.Version)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, v := range []string{"1.0.0", "2.0.0"} {
		e.wantEqual(len(got[v]), n, "instances the "+v+" build fetched")
		for _, g := range got[v] {
			e.wantEqual(g, v, "version of an instance the "+v+" build fetched")
		}
	}
}

func capConcurrentNoDoubleLock(t *testing.T, f Factory) {
	e := newEnv(t, f)
	const n = 12
	var ids []string
	for i := range n {
		id := string(rune('a' + i))
		e.createPinned(id, "1.0.0")
		ids = append(ids, id)
	}
	e.tick(ids...)
	seen := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 3, LockFor: longLock, Capability: capOf(orchName, "1.0.0")})
				if err != nil {
					t.Error(err)
					return
				}
				if len(items) == 0 {
					return
				}
				mu.Lock()
				for _, it := range items {
					seen[it.Instance]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	e.wantEqual(len(seen), n, "instances fetched")
	for id, k := range seen {
		e.wantEqual(k, 1, "times "+id+" was fetched")
	}
}

func capInvalidRejected(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for what, c := range map[string]*provider.Capability{
		"a version that is not semver":  capOf(orchName, "banana"),
		"an orchestration without name": capOf("", "1.0.0"),
	} {
		_, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 1, LockFor: longLock, Capability: c})
		e.wantErr(err, provider.ErrInvalidArgument, "a fetch with "+what)
	}
}
