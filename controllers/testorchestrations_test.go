package controllers_test

import (
	"strings"
	"time"

	dxruntime "github.com/duroxide/duroxide-go/runtime"
)

// TimersInput sizes the Timers orchestration.
type TimersInput struct {
	Count       int `json:"count"`
	OutputBytes int `json:"outputBytes"`
}

func registerTestOrchestrations(reg *dxruntime.Registry) {
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
