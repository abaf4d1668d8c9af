package providertest

import (
	"slices"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func workerCases() []Case {
	return []Case{
		{Name: "HeartbeatAnnouncesTheWorker", Run: workersAnnounce},
		{Name: "HeartbeatRefreshesTheAnnouncement", Run: workersRefresh},
		{Name: "StaleWorkersAreNotListed", Run: workersStale},
		{Name: "RemovedWorkerIsNotListed", Run: workersRemove},
		{Name: "PeerSeesTheAnnouncement", Run: workersPeer},
	}
}

func (e *env) workers() provider.Workers {
	e.t.Helper()
	return e.p
}

func sampleWorker(id string) provider.WorkerInfo {
	return provider.WorkerInfo{ID: id,
		Orchestrations: map[string][]string{"Hello": {"1.0.0"}, "Order": {"1.0.0", "2.0.0"}},
		Activities:     []string{"Greet", "Charge"}}
}

func (e *env) listWorkers(w provider.Workers, within time.Duration) []provider.WorkerInfo {
	e.t.Helper()
	list, err := w.ListWorkers(e.ctx, provider.ListWorkersRequest{Within: within})
	e.must(err, "list workers")
	return list
}

func workerIDs(list []provider.WorkerInfo) []string {
	ids := make([]string, 0, len(list))
	for _, w := range list {
		ids = append(ids, w.ID)
	}
	return ids
}

func workersAnnounce(t *testing.T, f Factory) {
	e := newEnv(t, f)
	w := e.workers()
	e.wantEqual(len(e.listWorkers(w, time.Minute)), 0, "workers of a new store")
	before := time.Now().Add(-time.Second)
	e.must(w.Heartbeat(e.ctx, sampleWorker("w1")), "heartbeat")
	e.must(w.Heartbeat(e.ctx, sampleWorker("w2")), "heartbeat")
	list := e.listWorkers(w, time.Minute)
	e.wantEqual(workerIDs(list), []string{"w1", "w2"}, "listed workers")
	got := list[0]
	e.wantEqual(got.Orchestrations, sampleWorker("w1").Orchestrations, "announced orchestrations")
	e.wantEqual(got.Activities, sampleWorker("w1").Activities, "announced activities")
	if got.LastSeen.Before(before) || got.StartedAt.After(got.LastSeen) {
		t.Fatalf("times: started %v, last seen %v (heartbeat after %v)", got.StartedAt, got.LastSeen, before)
	}
	e.wantEqual([]bool{got.Registers("Order", "2.0.0"), got.Registers("Order", ""), got.Registers("Order", "3.0.0"), got.Registers("Nope", "")},
		[]bool{true, true, false, false}, "Registers")
}

func workersRefresh(t *testing.T, f Factory) {
	e := newEnv(t, f)
	w := e.workers()
	e.must(w.Heartbeat(e.ctx, sampleWorker("w1")), "heartbeat")
	first := e.listWorkers(w, time.Minute)[0]
	time.Sleep(20 * time.Millisecond)
	upgraded := sampleWorker("w1")
	upgraded.Orchestrations = map[string][]string{"Hello": {"1.0.0", "1.1.0"}}
	e.must(w.Heartbeat(e.ctx, upgraded), "second heartbeat")
	list := e.listWorkers(w, time.Minute)
	e.wantEqual(len(list), 1, "workers after a second heartbeat of one worker")
	e.wantEqual(list[0].Orchestrations, upgraded.Orchestrations, "orchestrations after the second heartbeat")
	if !list[0].LastSeen.After(first.LastSeen) || !list[0].StartedAt.Equal(first.StartedAt) {
		t.Fatalf("second heartbeat: last seen %v -> %v, started %v -> %v (want later, unchanged)",
			first.LastSeen, list[0].LastSeen, first.StartedAt, list[0].StartedAt)
	}
}

func workersStale(t *testing.T, f Factory) {
	e := newEnv(t, f)
	w := e.workers()
	const gap, margin = 1500 * time.Millisecond, time.Second
	e.must(w.Heartbeat(e.ctx, sampleWorker("old")), "heartbeat")
	time.Sleep(gap)
	beforeFresh := time.Now()
	e.must(w.Heartbeat(e.ctx, sampleWorker("fresh")), "heartbeat")
	// The window reaches back to just before the fresh heartbeat (plus a margin
	// for the time until the store evaluates it), never to the old one.
	within := time.Since(beforeFresh) + margin
	e.wantEqual(workerIDs(e.listWorkers(w, within)), []string{"fresh"}, "workers seen within the window")
	e.wantEqual(workerIDs(e.listWorkers(w, time.Minute)), []string{"fresh", "old"}, "workers seen within a minute")
}

func workersRemove(t *testing.T, f Factory) {
	e := newEnv(t, f)
	w := e.workers()
	e.must(w.Heartbeat(e.ctx, sampleWorker("a")), "heartbeat")
	e.must(w.Heartbeat(e.ctx, sampleWorker("b")), "heartbeat")
	e.must(w.RemoveWorker(e.ctx, provider.WorkerRequest{ID: "a"}), "remove worker")
	e.must(w.RemoveWorker(e.ctx, provider.WorkerRequest{ID: "never-seen"}), "remove an unknown worker")
	e.wantEqual(workerIDs(e.listWorkers(w, time.Minute)), []string{"b"}, "workers after removal")
}

func workersPeer(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.must(e.workers().Heartbeat(e.ctx, sampleWorker("w1")), "heartbeat")
	peer := f.OpenPeer(t, e.p)
	list, err := peer.ListWorkers(e.ctx, provider.ListWorkersRequest{Within: time.Minute})
	e.must(err, "peer lists workers")
	if !slices.Equal(workerIDs(list), []string{"w1"}) {
		t.Fatalf("peer sees %v", workerIDs(list))
	}
}
