package engine

import "github.com/duroxide/duroxide-go/provider"

// QuietWaits says which activity results would leave an execution's code
// blocked, as a turn left it: the result of such an activity only counts
// toward a wait that stays parked, so the turn it would bring on would
// record it and wait on.
type QuietWaits struct {
	Execution int64
	// remaining is, for each parked wait, how many more results wake it.
	remaining []int
	// waitsOf lists, for each pending activity, the waits its result
	// counts toward (none: nothing awaits it yet). An activity not listed is
	// not quiet.
	waitsOf map[int64][]int
}

// quietWaitsOf reads, from a turn that ended with its execution running, the
// pending activities whose results would each leave every coroutine parked.
// nil when none would.
func (t *turn) quietWaitsOf() *QuietWaits {
	if t.finished || t.ended || t.mainDone() {
		return nil
	}
	q := &QuietWaits{Execution: t.executionID, waitsOf: map[int64][]int{}}
	index := map[*wait]int{}
	for id, a := range t.byID {
		f := a.future
		if a.kind != provider.EventActivityScheduled || f == nil || f.done || len(f.onResolve) > 0 {
			continue
		}
		ws := []int{}
		for _, w := range f.waiters {
			if w.c.waiting != w {
				continue // a wait that already ended
			}
			k, ok := index[w]
			if !ok {
				k = len(q.remaining)
				index[w] = k
				q.remaining = append(q.remaining, w.need)
			}
			ws = append(ws, k)
		}
		q.waitsOf[id] = ws
	}
	if len(q.waitsOf) == 0 {
		return nil
	}
	return q
}

// Take counts the result of activity id toward its waits when none of them
// wakes, and reports whether it did: the result is quiet.
func (q *QuietWaits) Take(id int64) bool {
	ws, ok := q.waitsOf[id]
	if !ok {
		return false
	}
	for _, w := range ws {
		if q.remaining[w] <= 1 {
			return false
		}
	}
	for _, w := range ws {
		q.remaining[w]--
	}
	delete(q.waitsOf, id)
	return true
}
