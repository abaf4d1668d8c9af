// Package clock tests rule 2: the wall clock and wall-clock timers.
package clock

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// WallClock reads and waits on the wall clock.
func WallClock(ctx *runtime.OrchestrationContext, d time.Duration) (time.Duration, error) { // want WallClock:"calls time.Now"
	start := time.Now()          // want `^time\.Now in orchestration WallClock: use ctx\.Now\(\), which replays the recorded time$`
	_ = time.Until(start.Add(d)) // want `^time\.Until in orchestration WallClock: use ctx\.Now\(\)`
	time.Sleep(d)                // want `^time\.Sleep in orchestration WallClock: use ctx\.CreateTimer, a durable timer recorded in the history$`
	t := time.NewTimer(d)        // want `^time\.NewTimer in orchestration WallClock: use ctx\.CreateTimer`
	defer t.Stop()               // (*time.Timer).Stop is not a rule: the timer was reported where it was made
	time.AfterFunc(d, func() {}) // want `^time\.AfterFunc in orchestration WallClock`
	_ = time.NewTicker(d)        // want `^time\.NewTicker in orchestration WallClock`
	clock := time.Now            // want `^time\.Now in orchestration WallClock`
	_ = clock
	return time.Since(start), nil // want `^time\.Since in orchestration WallClock: use ctx\.Now\(\)`
}

// Durable uses the replayed clock and a durable timer: no report. Time
// arithmetic and formatting are deterministic.
func Durable(ctx *runtime.OrchestrationContext, d time.Duration) (string, error) {
	deadline := ctx.Now().Add(d)
	if err := ctx.CreateTimer(d).Await(nil); err != nil {
		return "", err
	}
	return deadline.Format(time.RFC3339) + (2 * time.Second).String(), nil
}

// stampActivity is an activity, not orchestration code: no report.
func stampActivity(_ context.Context, _ string) (string, error) { // want stampActivity:"calls time.Sleep"
	time.Sleep(time.Millisecond)
	return time.Now().String(), nil
}
