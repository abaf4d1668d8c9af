package providertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func tagCases() []Case {
	return []Case{
		{Name: "DefaultFilterTakesUntaggedOnly", Run: defaultFilterTakesUntaggedOnly},
		{Name: "NamedTagsTakeOnlyTheirs", Run: namedTagsTakeOnlyTheirs},
		{Name: "UntaggedAndNamedTags", Run: untaggedAndNamedTags},
		{Name: "AnyTakesEverythingInOrder", Run: anyTakesEverything},
		{Name: "TagReadBackWithItem", Run: tagReadBackWithItem},
		{Name: "FilterSkipsWithoutLocking", Run: filterSkipsWithoutLocking},
		{Name: "TagSurvivesAbandon", Run: tagSurvivesAbandon},
		{Name: "TagSurvivesTurnAck", Run: tagSurvivesTurnAck},
		{Name: "TagSurvivesExpiredLease", Run: tagSurvivesExpiredLease},
		{Name: "LeasedAtAckKeepsTag", Run: leasedAtAckKeepsTag, Path: PathLease},
		{Name: "PollWakesForItsTagOnly", Run: pollWakesForItsTagOnly},
		{Name: "PeersWithDisjointTagsNeverShare", Run: peersWithDisjointTagsNeverShare},
		{Name: "InvalidTagsRejected", Run: invalidTagsRejected},
		{Name: "QueuedActivitiesListTags", Run: queuedActivitiesListTags},
	}
}

func taggedItem(instance string, id int64, tag string) provider.WorkItem {
	w := activityItem(instance, 1, id)
	w.Tag = tag
	return w
}

// fetchTagged leases the next item f takes, or returns nil.
func (e *env) fetchTagged(f provider.TagFilter) *provider.WorkItemLease {
	e.t.Helper()
	lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, Tags: f})
	e.must(err, "fetch work item with tags "+f.String())
	return lease
}

// drainTagged fetches with f until nothing is ready and returns the
// activity IDs it got, in order.
func (e *env) drainTagged(f provider.TagFilter) []int64 {
	e.t.Helper()
	var ids []int64
	for {
		lease := e.fetchTagged(f)
		if lease == nil {
			return ids
		}
		ids = append(ids, lease.Item.ID)
	}
}

// enqueueMixed queues activities 1..4 tagged "", gpu, ml, gpu.
func (e *env) enqueueMixed() {
	e.t.Helper()
	for id, tag := range []string{"", "gpu", "ml", "gpu"} {
		e.enqueueWork(taggedItem("a", int64(id+1), tag))
	}
}

func defaultFilterTakesUntaggedOnly(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueMixed()
	e.wantEqual(e.drainTagged(provider.TagFilter{}), []int64{1}, "a default fetch's items")
	e.wantEqual(e.depths().Worker, 3, "tagged items left queued")
}

func namedTagsTakeOnlyTheirs(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueMixed()
	e.wantEqual(e.drainTagged(provider.TagFilter{Tags: []string{"gpu"}}), []int64{2, 4}, "a gpu fetch's items")
	e.wantEqual(e.drainTagged(provider.TagFilter{Tags: []string{"ml", "other"}}), []int64{3}, "an ml,other fetch's items")
	e.wantEqual(e.drainTagged(provider.TagFilter{}), []int64{1}, "the untagged item, left for a default fetch")
}

func untaggedAndNamedTags(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueMixed()
	e.wantEqual(e.drainTagged(provider.TagFilter{Tags: []string{"gpu"}, Untagged: true}), []int64{1, 2, 4}, "an untagged-and-gpu fetch's items")
}

func anyTakesEverything(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueMixed()
	e.wantEqual(e.drainTagged(provider.TagFilter{Any: true}), []int64{1, 2, 3, 4}, "an any fetch's items, oldest first")
}

func tagReadBackWithItem(t *testing.T, f Factory) {
	e := newEnv(t, f)
	want := taggedItem("a", 7, "gpu-a100")
	want.Headers = map[string]string{"k": "v"}
	e.enqueueWork(want)
	lease := e.fetchTagged(provider.TagFilter{Tags: []string{"gpu-a100"}})
	if lease == nil {
		t.Fatal("the tagged item was not fetched")
	}
	got := lease.Item
	e.wantEqual([]any{got.Tag, got.Name, got.Input, got.ID, got.Headers["k"]}, []any{"gpu-a100", "Act", "7", 7, "v"}, "item read back")
}

// A fetch that skips an older item for its tag leaves it unlocked and
// without an attempt.
func filterSkipsWithoutLocking(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(taggedItem("a", 1, ""))
	e.enqueueWork(taggedItem("a", 2, "gpu"))
	gpu := e.fetchTagged(provider.TagFilter{Tags: []string{"gpu"}})
	if gpu == nil || gpu.Item.ID != 2 {
		t.Fatalf("gpu fetch: got %+v, want activity 2", gpu)
	}
	plain := e.fetchTagged(provider.TagFilter{})
	if plain == nil || plain.Item.ID != 1 {
		t.Fatalf("default fetch after it: got %+v, want activity 1", plain)
	}
	e.wantEqual(plain.AttemptCount, 1, "attempts of the skipped item when first fetched")
}

func tagSurvivesAbandon(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(taggedItem("a", 1, "gpu"))
	lease := e.fetchTagged(provider.TagFilter{Tags: []string{"gpu"}})
	e.must(e.p.AbandonWorkItem(e.ctx, provider.AbandonRequest{LockToken: lease.LockToken}), "abandon")
	e.wantEqual(e.drainTagged(provider.TagFilter{}), []int64(nil), "a default fetch after the abandon")
	again := e.fetchTagged(provider.TagFilter{Tags: []string{"gpu"}})
	if again == nil {
		t.Fatal("the abandoned item was not fetched again by its tag")
	}
	e.wantEqual([]any{again.Item.Tag, again.AttemptCount}, []any{"gpu", 2}, "tag and attempts after the abandon")
}

func tagSurvivesTurnAck(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.turn("a", func(item *provider.OrchestrationItem, ack *provider.OrchestrationAck) {
		w := activityItem("a", item.ExecutionID, 2)
		w.Tag = "gpu"
		ack.WorkerItems = []provider.WorkItem{activityItem("a", item.ExecutionID, 3), w}
	})
	e.wantEqual(e.drainTagged(provider.TagFilter{}), []int64{3}, "a default fetch after the turn")
	lease := e.fetchTagged(provider.TagFilter{Tags: []string{"gpu"}})
	if lease == nil {
		t.Fatal("the turn's tagged activity was not fetched by its tag")
	}
	e.wantEqual([]any{lease.Item.ID, lease.Item.Tag, lease.State}, []any{2, "gpu", provider.StateRunning}, "the tagged lease")
}

func tagSurvivesExpiredLease(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueWork(taggedItem("a", 1, "gpu"))
	lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: shortLock, Tags: provider.TagFilter{Tags: []string{"gpu"}}})
	e.must(err, "fetch")
	if lease == nil {
		t.Fatal("nothing fetched")
	}
	time.Sleep(pastShortLock)
	e.wantEqual(e.drainTagged(provider.TagFilter{}), []int64(nil), "a default fetch after the lease lapsed")
	e.wantEqual(e.drainTagged(provider.TagFilter{Tags: []string{"gpu"}}), []int64{1}, "a gpu fetch after the lease lapsed")
}

func leasedAtAckKeepsTag(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.create("a")
	e.enqueue(externalItem("a", "tick"))
	item := e.fetchInstance("a")
	w := activityItem("a", item.ExecutionID, 2)
	w.Tag = "gpu"
	ack := provider.OrchestrationAck{ExecutionID: item.ExecutionID, HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)},
		WorkerItems: []provider.WorkItem{w}}
	leases, err := AckTurnLeasing(e.ctx, e.p, item.LockToken, ack, []int{0}, shortLock)
	e.must(err, "ack leasing")
	e.wantEqual(len(leases), 1, "leases")
	e.wantEqual(leases[0].Item.Tag, "gpu", "the lease's tag")
	time.Sleep(pastShortLock)
	e.wantEqual(e.drainTagged(provider.TagFilter{}), []int64(nil), "a default fetch after the lease lapsed")
	e.wantEqual(e.drainTagged(provider.TagFilter{Tags: []string{"gpu"}}), []int64{2}, "a gpu fetch after the lease lapsed")
}

func pollWakesForItsTagOnly(t *testing.T, f Factory) {
	e := newEnv(t, f)
	got := make(chan *provider.WorkItemLease, 1)
	go func() {
		lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, PollFor: 5 * time.Second,
			Tags: provider.TagFilter{Tags: []string{"gpu"}}})
		if err != nil {
			t.Error(err)
		}
		got <- lease
	}()
	time.Sleep(100 * time.Millisecond)
	e.enqueueWork(taggedItem("a", 1, ""))
	time.Sleep(200 * time.Millisecond)
	e.enqueueWork(taggedItem("a", 2, "gpu"))
	select {
	case lease := <-got:
		if lease == nil || lease.Item.ID != 2 {
			t.Fatalf("the gpu poll got %+v, want activity 2", lease)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the gpu poll did not wake for a gpu item")
	}
	e.wantEqual(e.drainTagged(provider.TagFilter{}), []int64{1}, "the untagged item, left for a default fetch")
}

// Two processes on one store, each serving its own tag, take only their
// own items however their fetches interleave.
func peersWithDisjointTagsNeverShare(t *testing.T, f Factory) {
	e := newEnv(t, f)
	peer := e.f.OpenPeer(t, e.p)
	const n = 20
	for id := int64(1); id <= 2*n; id++ {
		tag := "left"
		if id%2 == 0 {
			tag = "right"
		}
		e.enqueueWork(taggedItem("a", id, tag))
	}
	var wg sync.WaitGroup
	got := map[string][]string{}
	var mu sync.Mutex
	for _, side := range []struct {
		p   provider.Provider
		tag string
	}{{e.p, "left"}, {peer, "right"}} {
		wg.Go(func() {
			for {
				lease, err := side.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, Tags: provider.TagFilter{Tags: []string{side.tag}}})
				if err != nil {
					t.Error(err)
					return
				}
				if lease == nil {
					return
				}
				mu.Lock()
				got[side.tag] = append(got[side.tag], lease.Item.Tag)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, tag := range []string{"left", "right"} {
		e.wantEqual(len(got[tag]), n, tag+" items fetched by its peer")
		for _, g := range got[tag] {
			e.wantEqual(g, tag, "tag of an item the "+tag+" peer fetched")
		}
	}
}

func invalidTagsRejected(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, Tags: provider.TagFilter{Tags: []string{"no spaces"}}})
	e.wantErr(err, provider.ErrInvalidArgument, "fetch with an invalid tag")
	e.wantErr(e.p.EnqueueForWorker(e.ctx, provider.EnqueueRequest{Item: taggedItem("a", 1, "bad/tag")}), provider.ErrInvalidArgument,
		"enqueue with an invalid tag")
	timer := provider.WorkItem{Kind: provider.WorkExternalRaised, Instance: "a", Name: "x", Tag: "gpu"}
	e.wantErr(e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: timer}), provider.ErrInvalidArgument,
		"a tag on an orchestrator message")
	e.create("b")
	e.enqueue(externalItem("b", "tick"))
	item := e.fetchInstance("b")
	bad := activityItem("b", item.ExecutionID, 2)
	bad.Tag = "-gpu"
	err = AckTurn(e.ctx, e.p, item.LockToken, provider.OrchestrationAck{ExecutionID: item.ExecutionID,
		HistoryDelta: []provider.Event{event(item, 1, provider.EventExternalRaised)}, WorkerItems: []provider.WorkItem{bad}})
	e.wantErr(err, provider.ErrInvalidArgument, "a turn scheduling an activity with an invalid tag")
	e.wantEqual(len(e.history("b")), 1, "history of b after the refused ack")
	e.wantEqual(e.depths().Worker, 0, "worker items after the refused acks")
}

func queuedActivitiesListTags(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueueMixed()
	e.enqueueWork(taggedItem("other", 9, "gpu"))
	lease := e.fetchTagged(provider.TagFilter{Tags: []string{"ml"}})
	got, err := e.a.ListQueuedActivities(e.ctx, provider.InstanceRequest{Instance: "a"})
	e.must(err, "list queued activities")
	var rows []string
	for _, q := range got {
		rows = append(rows, fmt.Sprintf("%d:%s:%s:%d:%v", q.ActivityID, q.Name, q.Tag, q.Attempts, q.Leased))
		if time.Since(q.Queued) > time.Minute || time.Until(q.Queued) > time.Minute {
			t.Errorf("activity %d queued at %v", q.ActivityID, q.Queued)
		}
	}
	e.wantEqual(rows, []string{"1:Act::0:false", "2:Act:gpu:0:false", "3:Act:ml:1:true", "4:Act:gpu:0:false"}, "queued activities of a")
	e.must(AckActivity(e.ctx, e.p, lease.LockToken, nil), "ack")
	got, err = e.a.ListQueuedActivities(e.ctx, provider.InstanceRequest{Instance: "nobody"})
	e.must(err, "list queued activities of an unknown instance")
	e.wantEqual(len(got), 0, "queued activities of an unknown instance")
}
