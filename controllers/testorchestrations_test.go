package controllers_test

import (
	"strings"
	"sync/atomic"
	"time"

	dxruntime "github.com/duroxide/duroxide-go/runtime"
)

// TimersInput sizes the Timers orchestration.
type TimersInput struct {
	Count       int `json:"count"`
	OutputBytes int `json:"outputBytes"`
}

// drifted makes Drift's code differ from what its first turn recorded, as
// a worker image deployed with changed code would: its instances stall on
// nondeterminism until it is false again.
var drifted atomic.Bool

func registerTestOrchestrations(reg *dxruntime.Registry) {
	registerTaggedTestOrchestrations(reg)
	// Drift sleeps an hour; with drifted set, its code first calls an
	// activity instead, which its history does not record.
	dxruntime.RegisterOrchestration(reg, "Drift", func(ctx *dxruntime.OrchestrationContext, _ string) (string, error) {
		if drifted.Load() {
			return dxruntime.Await[string](ctx.CallActivity("Drifted", ""))
		}
		if err := ctx.CreateTimer(time.Hour).Await(nil); err != nil {
			return "", err
		}
		return "woke", nil
	})
	// Timers fires Count zero-length timers at once (2 history events each)
	// and returns OutputBytes of output, with a custom status as large: a
	// big instance whose CR must stay small.
	dxruntime.RegisterOrchestration(reg, "Timers", func(ctx *dxruntime.OrchestrationContext, in TimersInput) (string, error) {
		ctx.SetCustomStatus(strings.Repeat("s", in.OutputBytes))
		timers := make([]*dxruntime.Future, in.Count)
		for i := range timers {
			timers[i] = ctx.CreateTimer(0)
		}
		if err := ctx.WhenAll(timers...); err != nil {
			return "", err
		}
		return strings.Repeat("x", in.OutputBytes), nil
	})
	// Tally waits for the events named in its input, in order, then lingers
	// so that any repeated delivery would land in its history.
	dxruntime.RegisterOrchestration(reg, "Tally", func(ctx *dxruntime.OrchestrationContext, names []string) ([]string, error) {
		var got []string
		for _, n := range names {
			v, err := dxruntime.Await[string](ctx.WaitForEvent(n))
			if err != nil {
				return nil, err
			}
			got = append(got, v)
			ctx.SetCustomStatus(map[string]int{"received": len(got)})
		}
		if err := ctx.CreateTimer(500 * time.Millisecond).Await(nil); err != nil {
			return nil, err
		}
		return got, nil
	})
}
