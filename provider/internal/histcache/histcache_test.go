package histcache

import (
	"strings"
	"testing"

	"github.com/duroxide/duroxide-go/provider"
)

func events(ids ...int64) []provider.Event {
	out := make([]provider.Event, len(ids))
	for i, id := range ids {
		out[i] = provider.Event{ID: id, Kind: provider.EventExternalRaised}
	}
	return out
}

func ids(evs []provider.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func wantIDs(t *testing.T, c *Cache, instance string, execution int64, want ...int64) {
	t.Helper()
	got, _, _, ok := c.Known(instance, execution)
	if len(want) == 0 {
		if ok {
			t.Fatalf("%s/%d: cached %v, want nothing", instance, execution, ids(got))
		}
		return
	}
	if !ok || len(got) != len(want) {
		t.Fatalf("%s/%d: cached %v (ok=%v), want %v", instance, execution, ids(got), ok, want)
	}
	for i := range want {
		if got[i].ID != want[i] {
			t.Fatalf("%s/%d: cached %v, want %v", instance, execution, ids(got), want)
		}
	}
}

func TestExtendKeepsContinuingEventsOnly(t *testing.T) {
	c := New(0)
	c.Store("a", 7, 1, events(1, 2), "e2")
	c.Extend("a", 1, events(3, 4), "e4")
	wantIDs(t, c, "a", 1, 1, 2, 3, 4)
	if _, inc, last, _ := c.Known("a", 1); inc != 7 || last != "e4" {
		t.Fatalf("incarnation %d, last %q; want 7, e4", inc, last)
	}

	c.Extend("a", 1, events(6), "e6") // a gap: event 5 was written elsewhere
	wantIDs(t, c, "a", 1)

	c.Store("a", 7, 1, events(1, 2), "e2")
	c.Extend("a", 1, events(3, 5), "e5") // not contiguous
	wantIDs(t, c, "a", 1)

	c.Extend("b", 1, events(2), "e2") // never cached: nothing to extend
	wantIDs(t, c, "b", 1)
}

func TestExtendStartsTheNextExecution(t *testing.T) {
	c := New(0)
	c.Store("a", 7, 1, events(1, 2, 3), "e3")
	c.Extend("a", 2, events(1), "n1")
	wantIDs(t, c, "a", 1)
	wantIDs(t, c, "a", 2, 1)
	if _, inc, _, _ := c.Known("a", 2); inc != 7 {
		t.Fatalf("incarnation %d, want 7 (the instance's)", inc)
	}
	c.Forget("a")
	c.Extend("a", 3, events(1), "m1") // an execution of an instance not cached
	wantIDs(t, c, "a", 3)
}

// A history handed to a turn stays as it was when the cache grows, and the
// turn appending to it does not change the cache.
func TestViewsAreNotShared(t *testing.T) {
	c := New(0)
	c.Store("a", 1, 1, events(1, 2), "e2")
	view, _, _, _ := c.Known("a", 1)
	c.Extend("a", 1, events(3), "e3")
	grown, _, _, _ := c.Known("a", 1)
	c.Extend("a", 1, events(4), "e4")
	if len(view) != 2 || len(grown) != 3 {
		t.Fatalf("views changed: %v, %v", ids(view), ids(grown))
	}
	grown = append(grown, provider.Event{ID: 99})
	wantIDs(t, c, "a", 1, 1, 2, 3, 4)
	if grown[3].ID != 99 {
		t.Fatalf("append to a view: %v", ids(grown))
	}
}

func TestSizeBoundsTheCache(t *testing.T) {
	c := New(2)
	c.Store("a", 1, 1, events(1), "a1")
	c.Store("b", 1, 1, events(1), "b1")
	c.Store("c", 1, 1, events(1), "c1")
	wantIDs(t, c, "a", 1)
	wantIDs(t, c, "c", 1, 1)
}

func TestNilCacheCachesNothing(t *testing.T) {
	c := New(-1)
	if c != nil {
		t.Fatal("New(-1) returned a cache")
	}
	c.Store("a", 1, 1, events(1), "a1")
	c.Extend("a", 1, events(2), "a2")
	c.Forget("a")
	wantIDs(t, c, "a", 1)
}

// The events' bytes bound the cache too: the least recently used go first,
// a history larger than a quarter of the budget is not kept (nor one that
// grows past it), and replacing an entry counts the old one out.
func TestBytesBoundTheCache(t *testing.T) {
	big := func(ids ...int64) []provider.Event {
		evs := events(ids...)
		for i := range evs {
			evs[i].Input = string(make([]byte, 700))
		}
		return evs
	}
	two := eventBytes(big(1, 2))
	c := newCache(100, 4*two+two/2) // room for four histories of two events
	for _, inst := range []string{"a", "b", "a", "c", "d"} {
		c.Store(inst, 1, 1, big(1, 2), inst+"2")
	}
	if c.bytes != 4*two {
		t.Fatalf("counted %d bytes for four histories, want %d (a replaced counts once)", c.bytes, 4*two)
	}
	c.Store("e", 1, 1, big(1, 2), "e2") // b, the least recently used, goes
	wantIDs(t, c, "b", 1)
	for _, inst := range []string{"a", "c", "d", "e"} {
		wantIDs(t, c, inst, 1, 1, 2)
	}
	c.Store("f", 1, 1, big(1, 2, 3), "f3") // over a quarter of the budget
	wantIDs(t, c, "f", 1)
	c.Extend("a", 1, big(3), "a3") // grows past a quarter: dropped
	wantIDs(t, c, "a", 1)
	c.Forget("c")
	if c.bytes != 2*two {
		t.Fatalf("counted %d bytes for d and e, want %d", c.bytes, 2*two)
	}
}

// Headers, durable values, tags and sessions count toward the bytes: a
// history whose values are large is not kept where its plain twin is.
func TestMapsCountTowardTheBytes(t *testing.T) {
	plain := events(1, 2)
	heavy := events(1, 2)
	heavy[0].Values = map[string]string{"cart": strings.Repeat("x", 2000)}
	heavy[1].Headers = provider.Headers{"traceparent": strings.Repeat("0", 2000)}
	heavy[1].Tag, heavy[1].Session = "gpu", strings.Repeat("s", 200)
	if got, want := eventBytes(heavy)-eventBytes(plain), int64(2*(64+32)+2*2000+len("cart")+len("traceparent")+len("gpu")+200); got != want {
		t.Fatalf("the maps, tag and session add %d bytes, want %d", got, want)
	}
	c := newCache(100, 4*eventBytes(plain)+100) // a quarter holds the plain history only
	c.Store("plain", 1, 1, plain, "plain2")
	c.Store("heavy", 1, 1, heavy, "heavy2")
	wantIDs(t, c, "plain", 1, 1, 2)
	wantIDs(t, c, "heavy", 1)
}
