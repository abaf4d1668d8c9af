package engine

import (
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

// scheduledIDs returns the IDs of the activities a turn scheduled, in order.
func scheduledIDs(ack provider.OrchestrationAck) []int64 {
	var ids []int64
	for _, ev := range ack.HistoryDelta {
		if ev.Kind == provider.EventActivityScheduled {
			ids = append(ids, ev.ID)
		}
	}
	return ids
}

// takes asks the set about each ID in turn and reports its answers.
func takes(q *QuietWaits, ids ...int64) []bool {
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = q != nil && q.Take(id)
	}
	return out
}

func TestWhenAllResultsAreQuietButTheLast(t *testing.T) {
	s := newSim(t, fanRegistry(t))
	ids := scheduledIDs(s.mustTurn(start("Fan", 3)))
	if len(ids) != 3 || s.lastQuiet == nil {
		t.Fatalf("scheduled %v, quiet set %v", ids, s.lastQuiet)
	}
	// In any order: the first two leave WhenAll waiting, the third wakes it.
	got := takes(s.lastQuiet, ids[2], ids[0], ids[1])
	if got[0] != true || got[1] != true || got[2] != false {
		t.Fatalf("quiet answers %v, want [true true false]", got)
	}
	if again := takes(s.lastQuiet, ids[2]); again[0] {
		t.Fatal("a result counted once must not be quiet a second time (a duplicate delivery)")
	}
	s.mustTurn(done(1, ids[0], 2), done(1, ids[1], 3), done(1, ids[2], 4))
	if s.status != provider.StatusCompleted || s.last.Metadata.Output != "9" || s.lastQuiet != nil {
		t.Fatalf("status %s output %s quiet %v", s.status, s.last.Metadata.Output, s.lastQuiet)
	}
}

func TestQuietSetFollowsPartialResults(t *testing.T) {
	s := newSim(t, fanRegistry(t))
	ids := scheduledIDs(s.mustTurn(start("Fan", 3)))
	s.mustTurn(done(1, ids[1], 1)) // a turn ran for one result: two remain
	if got := takes(s.lastQuiet, ids[1], ids[0], ids[2]); got[0] || !got[1] || got[2] {
		t.Fatalf("quiet answers %v, want [false true false]: a delivered result is not pending, the last one wakes", got)
	}
}

func TestSelectResultsAreNotQuiet(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Race", func(ctx *OrchestrationContext, _ struct{}) (int, error) {
			return ctx.Select(ctx.CallActivity("A", nil), ctx.CallActivity("B", nil)), nil
		})
	})
	s := newSim(t, reg)
	ids := scheduledIDs(s.mustTurn(start("Race", nil)))
	if got := takes(s.lastQuiet, ids...); len(got) != 2 || got[0] || got[1] {
		t.Fatalf("quiet answers %v, want [false false]: either result wakes a Select", got)
	}
}

func TestResultNothingAwaitsYetIsQuiet(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "InOrder", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			a, b := ctx.CallActivity("A", nil), ctx.CallActivity("B", nil)
			x, err := Await[string](a)
			if err != nil {
				return "", err
			}
			y, err := Await[string](b)
			return x + y, err
		})
	})
	s := newSim(t, reg)
	ids := scheduledIDs(s.mustTurn(start("InOrder", nil)))
	if got := takes(s.lastQuiet, ids[1], ids[0]); !got[0] || got[1] {
		t.Fatalf("quiet answers %v, want [true false]: b's result waits for a's, a's wakes the code", got)
	}
}

func TestRetriedActivityIsNotQuiet(t *testing.T) {
	reg := registry(t, func(r *Registry) {
		RegisterOrchestration(r, "Mixed", func(ctx *OrchestrationContext, _ struct{}) (string, error) {
			retried := ctx.CallActivity("Flaky", nil, WithRetry(RetryPolicy{MaxAttempts: 3}))
			plain := ctx.CallActivity("A", nil)
			other := ctx.CallActivity("B", nil)
			return "", ctx.WhenAll(retried, plain, other)
		})
	})
	s := newSim(t, reg)
	ack := s.mustTurn(start("Mixed", nil))
	byName := map[string]int64{}
	for _, ev := range ack.HistoryDelta {
		if ev.Kind == provider.EventActivityScheduled {
			byName[ev.Name] = ev.ID
		}
	}
	// The attempt's result wakes the retry coroutine (a failure schedules the
	// next attempt); the other two only count toward WhenAll, which the
	// retry's own result wakes last.
	if got := takes(s.lastQuiet, byName["Flaky"], byName["A"], byName["B"]); len(byName) != 3 || got[0] || !got[1] || !got[2] {
		t.Fatalf("scheduled %v, quiet answers %v, want [false true true]", byName, got)
	}
}

func TestFinishedExecutionHasNoQuietSet(t *testing.T) {
	s := newSim(t, helloRegistry(t))
	ids := scheduledIDs(s.mustTurn(start("Hello", "x")))
	if got := takes(s.lastQuiet, ids...); got[0] {
		t.Fatal("the only awaited result wakes the code: not quiet")
	}
	s.mustTurn(done(1, ids[0], "hi"))
	if s.status != provider.StatusCompleted || s.lastQuiet != nil {
		t.Fatalf("status %s, quiet set %v", s.status, s.lastQuiet)
	}
}
