package runtime

import (
	"fmt"
	"testing"
	"time"

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
func takes(q *quietSet, ids ...int64) []bool {
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = q != nil && q.take(id)
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

func TestQuietSetsAreNotedForRunningExecutionsOnly(t *testing.T) {
	var sets quietSets
	q := &quietSet{execution: 1, remaining: []int{2}, waitsOf: map[int64][]int{2: {0}, 3: {0}}}
	running := provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{{ID: 1}, {ID: 2}, {ID: 3}}}
	sets.note("i", running, q)
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "i", ExecutionID: 1, ID: 2}); held == nil || held.lastEvent != 3 {
		t.Fatalf("take = %v; want the set, at event 3", held)
	}
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "i", ExecutionID: 2, ID: 3}); held != nil {
		t.Fatal("a result of another execution is not quiet")
	}
	sets.forget("i")
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "i", ExecutionID: 1, ID: 3}); held != nil {
		t.Fatal("a forgotten set answers nothing")
	}
	ended := running
	ended.Metadata.Status = provider.StatusCompleted
	sets.note("i", ended, &quietSet{execution: 1, remaining: []int{2}, waitsOf: map[int64][]int{3: {0}}})
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "i", ExecutionID: 1, ID: 3}); held != nil {
		t.Fatal("a set of an execution that ended is not noted")
	}
}

// A quiet ack still in flight when a turn that records no event commits (a
// repeated keyed event) leaves its result queued where that turn did not
// see it: the turn notes no set, so the results after it are not quiet, and
// the old ack settles into nothing.
func TestQuietAckInFlightAcrossATurnWithoutEvents(t *testing.T) {
	s := newSim(t, fanRegistry(t))
	ids := scheduledIDs(s.mustTurn(start("Fan", 3)))
	var sets quietSets
	sets.note("inst", s.last, s.lastQuiet)
	result := func(k int) *provider.WorkItem { w := done(1, ids[k], k); return &w }
	held, _ := sets.take(t.Context(), result(0))
	if held == nil {
		t.Fatal("the first of three results is quiet")
	}
	sets.forget("inst") // the repeated event's turn begins
	s.mustTurn(raised("x", 1), raised("x", 1))
	noEvents := provider.OrchestrationAck{ExecutionID: 1}
	sets.note("inst", noEvents, s.lastQuiet)
	sets.settle(result(0), held, true) // the store found the history unchanged
	if again, _ := sets.take(t.Context(), result(1)); again != nil {
		t.Fatalf("after a turn without events the second result is quiet (set of event %d, %d acks in flight): with the first queued unseen, the third would be too",
			again.lastEvent, again.inFlight)
	}
	if held.inFlight != 0 {
		t.Fatalf("the old set has %d acks in flight after its ack settled, want 0", held.inFlight)
	}
}

// Sets unused for quietSetIdle are dropped: an instance whose next turns run
// in another process never takes its set here again.
func TestIdleQuietSetsAreDropped(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	sets := quietSets{now: func() time.Time { return now }}
	set := func() *quietSet {
		return &quietSet{execution: 1, remaining: []int{2}, waitsOf: map[int64][]int{2: {0}, 3: {0}}}
	}
	ack := provider.OrchestrationAck{ExecutionID: 1, HistoryDelta: []provider.Event{{ID: 1}, {ID: 2}, {ID: 3}}}
	for i := range 50 {
		sets.note(fmt.Sprint("left-", i), ack, set())
	}
	sets.note("busy", ack, set())
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "busy", ExecutionID: 1, ID: 2}); held == nil {
		t.Fatal("busy's first result is quiet")
	}
	now = now.Add(quietSetIdle / 2)
	sets.note("fresh", ack, set())
	now = now.Add(quietSetIdle / 2)
	sets.note("new", ack, set())
	if got := sets.len(); got != 3 {
		t.Fatalf("%d sets kept after %s, want 3 (busy with an ack in flight, fresh and new)", got, quietSetIdle)
	}
	if held, _ := sets.take(t.Context(), &provider.WorkItem{Instance: "left-7", ExecutionID: 1, ID: 2}); held != nil {
		t.Fatal("a dropped set answered")
	}
}
