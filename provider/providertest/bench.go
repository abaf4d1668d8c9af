package providertest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// benchInstances names the instances of every benchmark run in a process:
// a benchmark function runs several times on one store.
var benchInstances atomic.Int64

// BenchmarkTimerTurns measures the store's side of a one-timer orchestration,
// the bench's timer scenario: "start" commits first turns (OrchestrationStarted,
// TimerCreated and the timer, due at once), "fire" commits the timers'
// cached turns (TimerFired, OrchestrationCompleted). Each runs one caller at
// a time (every commit its own transaction) and 16 at once ("-16": callers
// share commits where the store batches them). ns/op is per turn.
func BenchmarkTimerTurns(b *testing.B, p provider.Provider) {
	for _, callers := range []int{1, 16} {
		suffix := ""
		if callers > 1 {
			suffix = fmt.Sprintf("-%d", callers)
		}
		b.Run("start"+suffix, func(b *testing.B) {
			ids, timers := benchIDs(b.N), make([]provider.WorkItem, b.N)
			b.ResetTimer()
			runTurns(b, callers, ids, func(ctx context.Context, i int) error { return startTimerInstance(ctx, p, ids[i], &timers[i]) })
		})
		b.Run("fire"+suffix, func(b *testing.B) {
			// In rounds, each started untimed: the history cache the turns
			// are built from holds a few thousand instances.
			for done := 0; done < b.N; done += fireRound {
				b.StopTimer()
				ids := benchIDs(min(fireRound, b.N-done))
				timers := make([]provider.WorkItem, len(ids))
				runTurns(b, 4, ids, func(ctx context.Context, i int) error { return startTimerInstance(ctx, p, ids[i], &timers[i]) })
				b.StartTimer()
				runTurns(b, callers, ids, func(ctx context.Context, i int) error { return fireTimer(ctx, p, timers[i]) })
			}
		})
	}
}

func benchIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-%d", benchInstances.Add(1))
	}
	return ids
}

// runTurns runs turn for every ID, callers at a time, and fails b on the
// first error.
func runTurns(b *testing.B, callers int, ids []string, turn func(ctx context.Context, i int) error) {
	b.Helper()
	ctx := b.Context()
	var next atomic.Int64
	errs := make(chan error, callers)
	for range callers {
		go func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) {
					errs <- nil
					return
				}
				if err := turn(ctx, i); err != nil {
					errs <- fmt.Errorf("%s: %w", ids[i], err)
					return
				}
			}
		}()
	}
	for range callers {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

const benchTimerID = 2

// fireRound is how many timers the fire benchmarks start, then fire, at a time.
const fireRound = 1000

// startTimerInstance commits id's first turn and sets *timer to the timer it
// queued.
func startTimerInstance(ctx context.Context, p provider.Provider, id string, timer *provider.WorkItem) error {
	now := time.Now().UnixMilli()
	// Due a moment ago: visible at once, so the fire turns need not wait.
	*timer = timerItem(id, 1, benchTimerID, time.Now().Add(-time.Millisecond))
	ack := provider.OrchestrationAck{
		ExecutionID: 1,
		HistoryDelta: []provider.Event{
			{ID: 1, Kind: provider.EventOrchestrationStarted, Time: now, Name: "Timer", Input: `{}`},
			{ID: benchTimerID, Kind: provider.EventTimerCreated, Time: now, FireAt: timer.FireAt},
		},
		OrchestratorItems: []provider.WorkItem{*timer},
		Metadata:          provider.ExecutionMetadata{OrchestrationName: "Timer"},
	}
	created, _, err := CommitFirstTurn(ctx, p, id, ack, nil, time.Minute)
	if err == nil && !created {
		err = errors.New("the first turn was refused")
	}
	return err
}

// fireTimer commits the turn of a timer startTimerInstance queued, built
// from the history cache as the runtime builds it.
func fireTimer(ctx context.Context, p provider.Provider, timer provider.WorkItem) error {
	turn := CachedTurn(p, timer.Instance, 1, timer)
	if turn == nil {
		return errors.New("no cached turn: the history cache does not hold the instance")
	}
	now := time.Now().UnixMilli()
	ack := provider.OrchestrationAck{
		ExecutionID: 1,
		HistoryDelta: []provider.Event{
			{ID: 3, Kind: provider.EventTimerFired, Time: now, SourceID: benchTimerID},
			{ID: 4, Kind: provider.EventOrchestrationCompleted, Time: now, Output: `"rang"`},
		},
		Metadata: provider.ExecutionMetadata{Status: provider.StatusCompleted, Output: `"rang"`},
	}
	_, err := CommitCachedTurn(ctx, p, "", turn, ack, nil, time.Minute)
	return err
}

// BenchmarkListFirstPage lists the first page of a store the caller filled
// with 100,000 instances named bench-N, 1 in 50 Running and none
// Terminated: unfiltered, by status, by ID prefix, and by a status no
// instance has (every row read).
func BenchmarkListFirstPage(b *testing.B, a provider.Admin) {
	for _, bc := range []struct {
		name  string
		req   provider.ListRequest
		empty bool
	}{
		{name: "all", req: provider.ListRequest{}},
		{name: "running", req: provider.ListRequest{Status: provider.StatusRunning}},
		{name: "prefix", req: provider.ListRequest{IDPrefix: "bench-9999"}},
		{name: "no-match", req: provider.ListRequest{Status: provider.StatusTerminated}, empty: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				page, err := a.ListInstances(b.Context(), bc.req)
				if err != nil || (len(page.Instances) == 0) != bc.empty {
					b.Fatalf("%d instances, %v", len(page.Instances), err)
				}
			}
		})
	}
}
