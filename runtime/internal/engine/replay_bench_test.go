package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

// BenchmarkReplay replays a fan-out of retried activities (each a coroutine)
// whose history holds about the given number of events. Cost per event must
// stay flat as the history grows: replay is linear.
func BenchmarkReplay(b *testing.B) {
	reg := registry(nil, func(r *Registry) {
		RegisterOrchestration(r, "Fan", func(ctx *OrchestrationContext, n int) (int, error) {
			fs := make([]*Future, n)
			for i := range fs {
				fs[i] = ctx.CallActivity("A", i, WithRetry(RetryPolicy{MaxAttempts: 3}))
			}
			return n, ctx.WhenAll(fs...)
		})
	})
	for _, events := range []int{1_000, 10_000, 100_000} {
		in := TurnInput{instance: "inst", executionID: 1, history: fanHistory(events/2 + 1), now: time.Now(), StepTimeout: time.Minute}
		b.Run(fmt.Sprintf("events=%d", len(in.history)), func(b *testing.B) {
			for b.Loop() {
				if _, err := runTurn(reg, in, quiet); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in.history)), "ns/event")
		})
	}
}

// fanHistory is the history of Fan(n) with all but one activity completed.
// It is built directly, so it may be longer than MaxHistoryEvents allows a
// live execution to grow.
func fanHistory(n int) []provider.Event {
	h := []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted, Name: "Fan", Version: DefaultVersion, Input: fmt.Sprint(n), Time: 1}}
	for i := range n {
		h = append(h, provider.Event{ID: int64(i + 2), Kind: provider.EventActivityScheduled, Name: "A", Input: fmt.Sprint(i), Time: 1})
	}
	for i := range n - 1 {
		h = append(h, provider.Event{ID: int64(n + 2 + i), Kind: provider.EventActivityCompleted, SourceID: int64(i + 2), Output: "1", Time: 2})
	}
	return h
}
