package storeengine

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
)

func TestFetchRoutes(t *testing.T) {
	r := &recorder{}
	e := New(r, Config{PollInterval: time.Second})
	ctx := context.Background()
	if _, err := e.Fetch(ctx, provider.FetchRequest{Max: 3, LockFor: time.Minute, FromCache: true}); err != nil || r.took != "LockReady" {
		t.Fatalf("any: took %q, %v", r.took, err)
	}
	if got := r.readyCalls[0]; got.Max != 3 || got.LockFor != time.Minute {
		t.Errorf("LockReady asked for %+v", got)
	}
	r.named = &provider.OrchestrationItem{Instance: "a"}
	items, err := e.Fetch(ctx, provider.FetchRequest{Max: 1, LockFor: time.Minute, Instance: "a"})
	if err != nil || r.took != "LockInstance a" || len(items) != 1 || items[0].Instance != "a" {
		t.Errorf("named: took %q, %v, %v", r.took, items, err)
	}
	r.named = nil
	if items, err := e.Fetch(ctx, provider.FetchRequest{Max: 1, LockFor: time.Minute, Instance: "a"}); err != nil || len(items) != 0 {
		t.Errorf("named, held: %v, %v; want none", items, err)
	}
	r.took = ""
	if _, err := e.Fetch(ctx, provider.FetchRequest{Instance: "a", LockFor: time.Minute}); !errors.Is(err, provider.ErrInvalidArgument) || r.took != "" {
		t.Errorf("named with Max 0: %v (took %q), want ErrInvalidArgument without a lookup", err, r.took)
	}
}

func TestFetchDeliver(t *testing.T) {
	r := &recorder{}
	e := New(r, Config{})
	cacheRunning(e, "a", 2)
	result := func(id int64) provider.WorkItem {
		return provider.WorkItem{Kind: provider.WorkActivityCompleted, Instance: "a", ExecutionID: 2, ID: id}
	}
	deliver := []provider.WorkItem{result(2), result(3)}
	ctx := context.Background()
	items, err := e.Fetch(ctx, provider.FetchRequest{Max: 1, Instance: "a", FromCache: true, Deliver: deliver})
	if err != nil || len(items) != 1 || len(items[0].Messages) != 2 || items[0].Messages[1].ID != 3 || r.took != "" {
		t.Fatalf("deliver: %+v, %v (took %q); want a turn from the cache delivering both", items, err, r.took)
	}
	for name, bad := range map[string]provider.FetchRequest{
		"not FromCache":    {Max: 1, Instance: "a", Deliver: deliver},
		"no instance":      {Max: 1, FromCache: true, Deliver: deliver},
		"Max 0":            {Instance: "a", FromCache: true, Deliver: deliver},
		"another's result": {Max: 1, Instance: "b", FromCache: true, Deliver: deliver},
	} {
		if _, err := e.Fetch(ctx, bad); !errors.Is(err, provider.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if r.took != "" {
		t.Errorf("a Deliver fetch reached the driver: %s", r.took)
	}
}

// cacheRunning caches instance's execution as running with its first event
// (incarnation 7), its custom status known: a turn can be built from it.
func cacheRunning(e *Engine, instance string, execution int64) {
	e.Hist.Store(instance, 7, execution, []provider.Event{{ID: 1, Kind: provider.EventOrchestrationStarted}}, "")
	e.Hist.NoteCustomStatus(instance, execution, 1, nil)
}

// timerFired is a due timer of instance's execution 1, as its ack queued it.
func timerFired(t *testing.T, instance string) string {
	t.Helper()
	stored, err := provider.EncodeWorkItem(provider.WorkItem{Kind: provider.WorkTimerFired, Instance: instance, ExecutionID: 1, ID: 2})
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

// Due timers of cached instances become turns without the driver; the
// others are named to it, and the cached ones' instances are excluded from
// its look while their turns are in flight, until they commit.
func TestReadyTakesDueTimers(t *testing.T) {
	r := &recorder{ready: func(p ReadyParams) (Ready, error) {
		return Ready{Items: []*provider.OrchestrationItem{{Instance: "b"}}}, nil
	}}
	e := New(r, Config{PollInterval: time.Hour})
	e.gate.Owed() // the first look is owed; the next ones are not, for an hour
	cacheRunning(e, "a", 1)
	past := time.Now().Add(-time.Second)
	e.Due.NoteTimer("a", past, timerFired(t, "a"))
	e.Due.NoteTimer("b", past, timerFired(t, "b"))
	ctx := context.Background()
	items, err := e.Fetch(ctx, provider.FetchRequest{Max: 4, LockFor: time.Minute, FromCache: true})
	if err != nil || len(items) != 2 || !items[0].Cached || items[0].Instance != "a" || items[1].Instance != "b" {
		t.Fatalf("got %+v, %v; want a's cached turn, then b's", items, err)
	}
	got := r.readyCalls[0]
	if got.Max != 3 || len(got.Named) != 1 || got.Named[0] != "b" || !slices.Contains(got.Exclude, "a") {
		t.Errorf("LockReady asked for %+v; want Max 3, b named, a excluded", got)
	}
	turn := items[0]
	if _, err := e.Commit(ctx, provider.CommitRequest{Turn: &provider.TurnCommit{Hold: provider.TurnCached, Instance: "a", Cached: turn}}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(e.InFlight.List(), "a") {
		t.Error("a's timers' turn committed and a is still in flight")
	}
}

// A driver failing after cached turns were built hands the turns out, and
// they stay in flight: the store still has the timers the driver could not
// lock, for a later look.
func TestReadyKeepsCachedTurnsWhenTheDriverFails(t *testing.T) {
	r := &recorder{ready: func(ReadyParams) (Ready, error) { return Ready{}, errors.New("store down") }}
	e := New(r, Config{PollInterval: time.Hour})
	e.gate.Owed()
	cacheRunning(e, "a", 1)
	past := time.Now().Add(-time.Second)
	e.Due.NoteTimer("a", past, timerFired(t, "a"))
	e.Due.NoteTimer("b", past, timerFired(t, "b"))
	items, err := e.Fetch(context.Background(), provider.FetchRequest{Max: 4, LockFor: time.Minute, FromCache: true})
	if err != nil || len(items) != 1 || items[0].Instance != "a" {
		t.Fatalf("got %+v, %v; want a's cached turn and no error", items, err)
	}
	if !slices.Contains(e.InFlight.List(), "a") {
		t.Error("a's turn was handed out and is not in flight")
	}
}

// With nothing found, the fetch reports the store's next due time, or an
// earlier timer this process noted.
func TestReadyWaitsForTheEarliestDueTime(t *testing.T) {
	storeDue := time.Now().Add(time.Hour)
	r := &recorder{ready: func(ReadyParams) (Ready, error) { return Ready{NextDue: storeDue}, nil }}
	e := New(r, Config{PollInterval: time.Hour})
	items, next, err := e.lookOnce(context.Background(), provider.FetchRequest{Max: 1, LockFor: time.Minute})
	if err != nil || len(items) != 0 || !next.Equal(storeDue) {
		t.Fatalf("got %v, next %v, %v; want none, next %v", items, next, err, storeDue)
	}
	noted := time.Now().Add(time.Minute)
	e.Due.NoteTimer("c", noted, timerFired(t, "c"))
	if _, next, _ = e.lookOnce(context.Background(), provider.FetchRequest{Max: 1, LockFor: time.Minute}); !next.Equal(noted) {
		t.Errorf("next %v, want the noted timer's %v", next, noted)
	}
}
