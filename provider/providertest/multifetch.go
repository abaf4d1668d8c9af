package providertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func multiFetchCases() []Case {
	return []Case{
		{Name: "FetchesUpToMaxInstances", Run: multiFetchUpToMax},
		{Name: "ReturnsFewerWhenFewerReady", Run: multiFetchFewer},
		{Name: "ItemsAreAckedAndAbandonedIndependently", Run: multiFetchIndependent},
		{Name: "SkipsLockedInstances", Run: multiFetchSkipsLocked},
		{Name: "InvalidMaxRejected", Run: multiFetchInvalidMax},
		{Name: "ConcurrentMultiFetchersGetDisjointInstances", Run: multiFetchConcurrentDisjoint},
		{Name: "LongPollReturnsWhenWorkArrives", Run: multiFetchLongPoll},
	}
}

func (e *env) fetchMany(max int) []*provider.OrchestrationItem {
	e.t.Helper()
	items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: max, LockFor: longLock, PollFor: 0})
	e.must(err, "fetch orchestration items")
	return items
}

func instancesOf(items []*provider.OrchestrationItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Instance
	}
	return out
}

func multiFetchUpToMax(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for i := range 5 {
		e.enqueue(startItem(fmt.Sprintf("i%d", i)))
	}
	e.wantEqual(instancesOf(e.fetchMany(3)), []string{"i0", "i1", "i2"}, "first batch")
	e.wantEqual(instancesOf(e.fetchMany(3)), []string{"i3", "i4"}, "second batch")
}

func multiFetchFewer(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.enqueue(startItem("a"))
	e.enqueue(startItem("b"))
	items := e.fetchMany(10)
	e.wantEqual(instancesOf(items), []string{"a", "b"}, "instances")
	e.wantEqual(len(items[0].Messages), 2, "messages of a")
	e.wantEqual(len(e.fetchMany(10)), 0, "items when nothing is ready")
}

func multiFetchIndependent(t *testing.T, f Factory) {
	e := newEnv(t, f)
	for _, id := range []string{"a", "b", "c"} {
		e.enqueue(startItem(id))
	}
	items := e.fetchMany(3)
	tokens := map[string]bool{}
	for _, it := range items {
		tokens[it.LockToken] = true
	}
	e.wantEqual(len(tokens), 3, "distinct tokens")
	e.ack(items[0], firstTurn(items[0]))
	e.must(e.p.AbandonOrchestrationItem(e.ctx, provider.AbandonRequest{LockToken: items[1].LockToken}), "abandon b")
	e.wantEqual(instancesOf(e.fetchMany(3)), []string{"b"}, "ready after ack a, abandon b, c still held")
	e.ack(items[2], firstTurn(items[2]))
	e.wantEqual([]bool{e.exists("a"), e.exists("b"), e.exists("c")}, []bool{true, false, true}, "instances created")
}

func multiFetchSkipsLocked(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.enqueue(startItem("a"))
	e.fetch()
	e.enqueue(externalItem("a", "x"))
	e.enqueue(startItem("b"))
	e.wantEqual(instancesOf(e.fetchMany(5)), []string{"b"}, "instances fetched")
}

func multiFetchInvalidMax(t *testing.T, f Factory) {
	e := newEnv(t, f)
	_, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 0, LockFor: longLock, PollFor: 0})
	e.wantErr(err, provider.ErrInvalidArgument, "fetch of zero items")
}

func multiFetchConcurrentDisjoint(t *testing.T, f Factory) {
	e := newEnv(t, f)
	const n = 40
	for i := range n {
		e.enqueue(startItem(fmt.Sprintf("i%02d", i)))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 7, LockFor: longLock, PollFor: 0})
				if err != nil {
					t.Errorf("fetch: %v", err)
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
	for id, c := range seen {
		if c != 1 {
			t.Errorf("instance %s fetched %d times", id, c)
		}
	}
}

func multiFetchLongPoll(t *testing.T, f Factory) {
	e := newEnv(t, f)
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: startItem("a")}); err != nil {
			t.Errorf("enqueue: %v", err)
		}
	}()
	items, err := e.p.Fetch(e.ctx, provider.FetchRequest{Max: 5, LockFor: longLock, PollFor: time.Minute})
	e.must(err, "long poll")
	e.wantEqual(instancesOf(items), []string{"a"}, "instances after long poll")
}
