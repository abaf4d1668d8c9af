// Package channels tests rule 5: channel operations.
package channels

import (
	"context"
	"time"

	"github.com/duroxide/duroxide-go/runtime"
)

// Channels uses every channel operation.
func Channels(ctx *runtime.OrchestrationContext, ch chan int) (int, error) { // want Channels:"sends on a channel"
	ch <- 1        // want `^channel send in orchestration Channels: use futures with ctx\.Select / ctx\.WhenAll$`
	n := <-ch      // want `^channel receive in orchestration Channels: use futures`
	for range ch { // want `^range over channel in orchestration Channels: use futures`
	}
	select { // want `^select statement in orchestration Channels: use futures`
	case v := <-ch:
		n += v
	case <-time.After(time.Second): // want `^time\.After in orchestration Channels: use ctx\.CreateTimer`
	}
	close(ch) // want `^close of channel in orchestration Channels: use futures`
	return n, nil
}

// Futures waits on futures instead: no report.
func Futures(ctx *runtime.OrchestrationContext, _ int) (int, error) {
	a := ctx.CallActivity("A", nil)
	b := ctx.CreateTimer(time.Minute)
	if ctx.Select(a, b) == 1 {
		return 0, nil
	}
	return runtime.Await[int](a)
}

// pump is an activity: channels are fine there, no report.
func pump(_ context.Context, n int) (int, error) { // want pump:"sends on a channel"
	ch := make(chan int, 1)
	ch <- n
	close(ch)
	return <-ch, nil
}
