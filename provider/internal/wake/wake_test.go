package wake

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// A fetcher sleeping a whole interval re-plans, without trying, when an
// earlier timer is noted, and tries again when it falls due.
func TestPollWakesForANotedTimer(t *testing.T) {
	due := NewDue()
	var tries atomic.Int32
	var dueAt time.Time
	go func() {
		time.Sleep(20 * time.Millisecond)
		dueAt = time.Now().Add(30 * time.Millisecond)
		due.Note("a", dueAt)
	}()
	start := time.Now()
	err := Poll(context.Background(), time.Minute, time.Minute, NewSignal(), due, nil, func() (bool, time.Time, error) {
		return tries.Add(1) == 2, time.Time{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := tries.Load(); n != 2 {
		t.Fatalf("%d tries, want 2: one at once, one when the noted timer fell due", n)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatalf("the second try came after %v: the noted timer did not shorten the sleep", time.Since(start))
	}
	if now := time.Now(); now.Before(dueAt) {
		t.Fatalf("tried %v before the noted timer fell due", dueAt.Sub(now))
	}
}

// Noting a timer later than one already noted wakes nobody; an earlier one,
// or any once the noted one passed, does.
func TestNoteWakesOnlyForAnEarlierTimer(t *testing.T) {
	due := NewDue()
	soon := time.Now().Add(time.Hour)
	due.Note("", soon)
	at, replan := due.next()
	if !at.Equal(soon) {
		t.Fatalf("noted %v, want %v", at, soon)
	}
	due.Note("", soon.Add(time.Minute))
	select {
	case <-replan:
		t.Fatal("a later timer woke the sleepers")
	default:
	}
	due.Note("", soon.Add(-time.Minute))
	select {
	case <-replan:
	default:
		t.Fatal("an earlier timer did not wake the sleepers")
	}
	if at, _ := due.next(); !at.Equal(soon.Add(-time.Minute)) {
		t.Fatalf("noted %v after the earlier timer", at)
	}
	var none *Due
	none.Note("a", soon) // a nil Due notes nothing
	if at, ch := none.next(); !at.IsZero() || ch != nil {
		t.Fatal("a nil Due reported a timer")
	}
}

// Ready hands out the instances whose noted timers fell due, earliest first,
// each once.
func TestReadyHandsOutDueInstances(t *testing.T) {
	due := NewDue()
	now := time.Now()
	due.Note("late", now.Add(time.Hour))
	due.Note("b", now.Add(-time.Second))
	due.Note("a", now.Add(-time.Minute))
	due.Note("c", now.Add(-time.Millisecond))
	if got := due.Ready(now, 2); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("Ready(2) = %v, want [a b]", got)
	}
	if got := due.Ready(now, 5); len(got) != 1 || got[0] != "c" {
		t.Fatalf("Ready(5) = %v, want [c]", got)
	}
	if got := due.Ready(now, 5); len(got) != 0 {
		t.Fatalf("Ready after all due ones = %v, want none", got)
	}
	if got := due.Ready(now.Add(2*time.Hour), 5); len(got) != 1 || got[0] != "late" {
		t.Fatalf("Ready two hours on = %v, want [late]", got)
	}
}

// The gate owes a look for ready work at first, after work is announced, and
// once a poll interval passed; not otherwise.
func TestScanGate(t *testing.T) {
	sig := NewSignal()
	g := NewScanGate(sig, time.Hour)
	if !g.Owed() {
		t.Fatal("a new gate owes no look")
	}
	if g.Owed() {
		t.Fatal("a look owed again with nothing announced")
	}
	sig.Notify()
	if !g.Owed() {
		t.Fatal("announced work owes no look")
	}
	if g.Owed() {
		t.Fatal("one announcement owed two looks")
	}
	short := NewScanGate(sig, time.Millisecond)
	short.Owed()
	time.Sleep(5 * time.Millisecond)
	if !short.Owed() {
		t.Fatal("no look owed after the poll interval")
	}
}

// A timer a fetch delivered before it was handed out is not handed out.
func TestDueSkipsTakenTimers(t *testing.T) {
	due := NewDue()
	now := time.Now()
	due.NoteTimer("a", now.Add(-time.Second), "a1")
	due.NoteTimer("b", now.Add(-time.Second), "b1")
	due.NoteTimer("a", now.Add(-time.Millisecond), "a2")
	due.Taken("a", "a1")
	due.Taken("c", "c1") // never noted: not remembered
	got := due.ReadyTimers(now, 10)
	if len(got) != 2 || got[0].Instance != "b" || got[1].Item != "a2" {
		t.Fatalf("ready %+v, want b1 then a2", got)
	}
	if len(due.taken) != 0 || len(due.noted) != 0 {
		t.Fatalf("left behind: taken %v, noted %v", due.taken, due.noted)
	}
}

// A look leaves out the instances whose noted timers fall due within
// ScanLead, and those already due unless the look was owed (it runs before
// the ready timers are taken, and takes them in their turn).
func TestUpcomingLeavesOutTimersAboutToFallDue(t *testing.T) {
	due := NewDue()
	now := time.Now()
	due.NoteTimer("due", now.Add(-time.Second), "d1")
	due.NoteTimer("soon", now.Add(ScanLead/2), "s1")
	due.NoteTimer("soon", now.Add(ScanLead/3), "s2")
	due.NoteTimer("later", now.Add(2*ScanLead), "l1")
	due.NoteTimer("taken", now.Add(ScanLead/2), "t1")
	due.Taken("taken", "t1")
	if got := sorted(due.Upcoming(now, false)); !slices.Equal(got, []string{"due", "soon"}) {
		t.Fatalf("a look after the ready timers were taken leaves out %v, want [due soon]", got)
	}
	if got := due.Upcoming(now, true); !slices.Equal(got, []string{"soon"}) {
		t.Fatalf("an owed look leaves out %v, want [soon]", got)
	}
	var none *Due
	if got := none.Upcoming(now, false); got != nil {
		t.Fatalf("a nil Due leaves out %v", got)
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// Earlier gives the earliest noted timer, past or ahead, when it comes
// before t: a look that left out a timer falling due meanwhile tries again.
func TestEarlierGivesTheEarliestNotedTimer(t *testing.T) {
	due := NewDue()
	now := time.Now()
	if got := due.Earlier(now); !got.Equal(now) {
		t.Fatalf("with no timer noted: %v, want %v", got, now)
	}
	past := now.Add(-time.Millisecond)
	due.NoteTimer("a", past, "a1")
	due.NoteTimer("b", now.Add(time.Hour), "b1")
	if got := due.Earlier(time.Time{}); !got.Equal(past) {
		t.Fatalf("Earlier(zero) = %v, want the past timer %v", got, past)
	}
	if got := due.Earlier(now.Add(-time.Hour)); !got.Equal(now.Add(-time.Hour)) {
		t.Fatalf("Earlier(an hour ago) = %v, want that", got)
	}
	var none *Due
	if got := none.Earlier(now); !got.Equal(now) {
		t.Fatalf("a nil Due: %v", got)
	}
}

// ReadyTimers hands out every due timer of an instance together, in the
// order due and then noted, and counts instances, not timers, against max:
// one turn delivers them all.
func TestReadyTimersGivesEachInstanceItsDueTimersTogether(t *testing.T) {
	due := NewDue()
	now := time.Now()
	due.NoteTimer("a", now.Add(-time.Second), "a1")
	due.NoteTimer("b", now.Add(-time.Second), "b1")
	due.NoteTimer("a", now.Add(-time.Millisecond), "a3")
	due.NoteTimer("a", now.Add(-time.Second), "a2")
	due.NoteTimer("a", now.Add(time.Hour), "a4")
	due.NoteTimer("c", now.Add(-time.Millisecond), "c1")
	got := items(due.ReadyTimers(now, 2))
	if !slices.Equal(got, []string{"a1", "a2", "a3", "b1"}) {
		t.Fatalf("ReadyTimers(2) = %v, want a's three due timers, then b's", got)
	}
	if got := items(due.ReadyTimers(now, 2)); !slices.Equal(got, []string{"c1"}) {
		t.Fatalf("then ReadyTimers(2) = %v, want [c1]", got)
	}
	if got := items(due.ReadyTimers(now.Add(2*time.Hour), 2)); !slices.Equal(got, []string{"a4"}) {
		t.Fatalf("two hours on = %v, want [a4]", got)
	}
	if len(due.noted) != 0 || len(due.taken) != 0 || len(due.timers) != 0 {
		t.Fatalf("left behind: noted %v, taken %v, %d timers", due.noted, due.taken, len(due.timers))
	}
}

func items(timers []DueTimer) []string {
	out := make([]string, len(timers))
	for i, t := range timers {
		out[i] = t.Item
	}
	return out
}

// ackOf is a committed ack's encoded form: its timers queued and cancelled.
func ackOf(t *testing.T, queued []provider.WorkItem, cancelled ...provider.TimerRef) encode.Ack {
	t.Helper()
	enc, err := encode.EncodeAck("test", provider.OrchestrationAck{ExecutionID: 1, OrchestratorItems: queued, CancelledTimers: cancelled})
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func timer(instance string, execution, id int64, at time.Time) provider.WorkItem {
	return provider.WorkItem{Kind: provider.WorkTimerFired, Instance: instance, ExecutionID: execution, ID: id, FireAt: at.UnixMilli()}
}

// An ack that cancels a noted timer forgets it: at its due time no timer is
// handed out for it. Timers it does not name stay noted.
func TestAckedForgetsCancelledTimers(t *testing.T) {
	due := NewDue()
	now := time.Now()
	at := now.Add(time.Second)
	if !due.Acked("a", ackOf(t, []provider.WorkItem{timer("a", 1, 3, at)}), now.UnixMilli()) {
		t.Fatal("an ack queuing a timer due later reported none")
	}
	due.Acked("b", ackOf(t, []provider.WorkItem{timer("b", 1, 3, at)}), now.UnixMilli())
	due.Acked("a", ackOf(t, nil, provider.TimerRef{ExecutionID: 2, TimerID: 3}), now.UnixMilli())
	if due.noted["a"] != 1 {
		t.Fatal("a timer of another execution forgot a's")
	}
	if due.Acked("a", ackOf(t, nil, provider.TimerRef{ExecutionID: 1, TimerID: 3}), now.UnixMilli()) {
		t.Fatal("an ack queuing nothing reported a timer due later")
	}
	if got := due.ReadyTimers(at, 10); len(got) != 1 || got[0].Instance != "b" {
		t.Fatalf("at the due time: %+v, want b's timer alone", got)
	}
	if len(due.noted) != 0 || len(due.timers) != 0 {
		t.Fatalf("left behind: noted %v, %d timers", due.noted, len(due.timers))
	}
	// An ack that queues a timer and cancels it (the store deletes it after
	// queuing it) notes nothing.
	due.Acked("c", ackOf(t, []provider.WorkItem{timer("c", 1, 4, at)}, provider.TimerRef{ExecutionID: 1, TimerID: 4}), now.UnixMilli())
	if len(due.timers) != 0 {
		t.Fatalf("%d timers noted for a timer queued and cancelled by one ack", len(due.timers))
	}
}

// When the notes are full, a timer due before the farthest noted one takes
// its place (that one is found by a look for ready work when it falls due);
// one due after every noted timer is not noted. Far-future timers never
// crowd out near ones.
func TestFullNotesEvictTheFarthestTimer(t *testing.T) {
	due := NewDue()
	now := time.Now()
	for i := range maxNotedTimers {
		due.NoteTimer(fmt.Sprint("far", i), now.Add(time.Hour+time.Duration(i)*time.Millisecond), fmt.Sprint("f", i))
	}
	due.NoteTimer("near", now.Add(time.Second), "n1")
	due.NoteTimer("farthest", now.Add(2*time.Hour), "x1")
	if len(due.timers) != maxNotedTimers {
		t.Fatalf("%d timers noted, want the bound, %d", len(due.timers), maxNotedTimers)
	}
	if got := items(due.ReadyTimers(now.Add(time.Second), 10)); !slices.Equal(got, []string{"n1"}) {
		t.Fatalf("at the near timer's due time: %v, want [n1]", got)
	}
	all := items(due.ReadyTimers(now.Add(3*time.Hour), 2*maxNotedTimers))
	evicted := fmt.Sprint("f", maxNotedTimers-1)
	if len(all) != maxNotedTimers-1 || slices.Contains(all, evicted) || slices.Contains(all, "x1") {
		t.Fatalf("%d timers handed out later (%v … %v); want all far ones but the farthest, %s, and not x1",
			len(all), all[:min(2, len(all))], all[max(0, len(all)-2):], evicted)
	}
	if len(due.noted) != 0 || len(due.taken) != 0 {
		t.Fatalf("left behind: %d noted, %d taken", len(due.noted), len(due.taken))
	}
}

// Every timer an ack queues that is due later is noted, not only its
// earliest; one already due is not (it is visible, and woke fetchers).
func TestAckedNotesEveryLaterTimer(t *testing.T) {
	due := NewDue()
	now := time.Now()
	soon, later := now.Add(time.Second), now.Add(time.Minute)
	due.Acked("a", ackOf(t, []provider.WorkItem{timer("a", 1, 4, later), timer("a", 1, 2, now), timer("a", 1, 3, soon)}), now.UnixMilli())
	for _, at := range []time.Time{soon, later} {
		got := due.ReadyTimers(at, 10)
		if len(got) != 1 || got[0].at.UnixMilli() != at.UnixMilli() {
			t.Fatalf("at %v: %+v, want the timer due then", at.Sub(now), got)
		}
	}
	if len(due.timers) != 0 {
		t.Fatalf("%d timers left noted, want none (the due one was never noted)", len(due.timers))
	}
}
