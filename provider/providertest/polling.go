package providertest

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// The bounds here check which way a fetch went (returned at once, waited,
// woke early), with wide margins; speed is measured by benchmarks, not here.
func pollingCases() []Case {
	return []Case{
		{Name: "ShortPollReturnsAtOnceWhenEmpty", Run: shortPollReturnsAtOnce},
		{Name: "LongPollWaitsUpToTimeout", Run: longPollWaits},
		{Name: "LongPollTimeoutIsUpperBound", Run: longPollUpperBound},
		{Name: "LongPollWakesWhenWorkArrives", Run: longPollWakes},
		{Name: "LongPollWakesWhenDelayedWorkBecomesVisible", Run: longPollDelayedVisible},
		{Name: "LongPollEndsWhenContextIsCancelled", Run: longPollContextCancel},
		{Name: "WorkerShortPollReturnsAtOnceWhenEmpty", Run: workerShortPoll},
		{Name: "WorkerLongPollWakesWhenWorkArrives", Run: workerLongPollWakes},
	}
}

func shortPollReturnsAtOnce(t *testing.T, f Factory) {
	e := newEnv(t, f)
	start := time.Now()
	e.fetchNone()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("short poll on an empty queue took %v", d)
	}
}

func longPollWaits(t *testing.T, f Factory) {
	e := newEnv(t, f)
	start := time.Now()
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{LockFor: longLock, PollFor: 300 * time.Millisecond})
	e.must(err, "long poll")
	if item != nil {
		t.Fatal("long poll on an empty queue returned an item")
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("long poll returned after %v, before its 300ms timeout", d)
	}
}

func longPollUpperBound(t *testing.T, f Factory) {
	e := newEnv(t, f)
	start := time.Now()
	_, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{LockFor: longLock, PollFor: 300 * time.Millisecond})
	e.must(err, "long poll")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("long poll with a 300ms timeout took %v", d)
	}
}

func longPollWakes(t *testing.T, f Factory) {
	e := newEnv(t, f)
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: startItem("a")}); err != nil {
			t.Errorf("enqueue: %v", err)
		}
	}()
	start := time.Now()
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{LockFor: longLock, PollFor: time.Minute})
	e.must(err, "long poll")
	if item == nil {
		t.Fatal("long poll returned nothing though work arrived")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("long poll woke after %v: it waited for its timeout instead of the work", d)
	}
}

func longPollDelayedVisible(t *testing.T, f Factory) {
	e := newEnv(t, f)
	e.must(e.p.EnqueueForOrchestrator(e.ctx, provider.EnqueueRequest{Item: startItem("a"), Delay: 300 * time.Millisecond}), "enqueue delayed")
	start := time.Now()
	item, err := provider.FetchOne(e.ctx, e.p, provider.FetchRequest{LockFor: longLock, PollFor: time.Minute})
	e.must(err, "long poll")
	if item == nil {
		t.Fatal("long poll returned nothing though delayed work became visible")
	}
	d := time.Since(start)
	if d < 250*time.Millisecond || d > 20*time.Second {
		t.Fatalf("delayed (300ms) message fetched after %v", d)
	}
}

func longPollContextCancel(t *testing.T, f Factory) {
	e := newEnv(t, f)
	ctx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	item, _ := provider.FetchOne(ctx, e.p, provider.FetchRequest{LockFor: longLock, PollFor: time.Minute})
	if item != nil {
		t.Fatal("cancelled long poll returned an item from an empty queue")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("long poll ignored its context for %v", d)
	}
}

func workerShortPoll(t *testing.T, f Factory) {
	e := newEnv(t, f)
	start := time.Now()
	e.fetchWorkNone()
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("short poll on an empty worker queue took %v", d)
	}
}

func workerLongPollWakes(t *testing.T, f Factory) {
	e := newEnv(t, f)
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := e.p.EnqueueForWorker(e.ctx, provider.EnqueueRequest{Item: activityItem("a", 1, 1)}); err != nil {
			t.Errorf("enqueue: %v", err)
		}
	}()
	start := time.Now()
	lease, err := e.p.FetchWorkItem(e.ctx, provider.FetchWorkRequest{LockFor: longLock, PollFor: time.Minute})
	e.must(err, "long poll")
	if lease == nil {
		t.Fatal("worker long poll returned nothing though work arrived")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("worker long poll woke after %v", d)
	}
}
