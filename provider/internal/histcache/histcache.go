// Package histcache keeps the decoded history of recently run executions in
// a provider's process, so a fetch reads and decodes only the events
// appended since, not the whole history on every turn.
//
// The store stays the authority. A cached history is used only when the
// store still holds the same life of the instance (its incarnation, a random
// number the store gives an instance when it creates it, so one deleted and
// started again is told apart) and its last cached event, byte for byte: a
// fetch reads from that event on and checks both. Events are never
// rewritten, so what follows it is what other processes (or this one)
// appended since.
package histcache

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/encode"
)

// DefaultSize is how many executions a cache holds unless told otherwise.
const DefaultSize = 4096

// MaxBytes bounds the memory a cache's events take (approximately: see
// eventBytes), whatever their number: the least recently used executions
// go first, and a history larger than a quarter of it is not kept.
const MaxBytes = 64 << 20

// Cache is safe for concurrent use. A nil *Cache caches nothing.
type Cache struct {
	mu       sync.Mutex // orders every change, for Extend's read-modify-write and the byte count
	lru      *lru.Cache[string, entry]
	bytes    int64 // of the entries held; changed under mu (evictions happen under it too)
	maxBytes int64
	// hits and misses count lookups (Known, Latest, Turn); evictions, the entries
	// dropped to make room.
	hits, misses, evictions atomic.Int64
}

// Counts returns how many lookups found what they asked for, how many did
// not, and how many entries were evicted to make room, since New.
func (c *Cache) Counts() (hits, misses, evictions int64) {
	if c == nil {
		return 0, 0, 0
	}
	return c.hits.Load(), c.misses.Load(), c.evictions.Load()
}

// counted counts a lookup's outcome and returns it.
func (c *Cache) counted(ok bool) bool {
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return ok
}

type entry struct {
	incarnation int64
	execution   int64
	bytes       int64
	// events has spare capacity that only Extend, under mu, writes into;
	// callers get views clipped to their length.
	events []provider.Event
	// last is the stored form of the last event.
	last string
	// custom is the instance's custom status as of the last event, when
	// known (customKnown): acks keep it, fetches note it (NoteCustomStatus).
	custom      *string
	customKnown bool
}

// New returns a cache of size executions (and at most MaxBytes of events);
// nil (no cache) when size < 0.
func New(size int) *Cache { return newCache(size, MaxBytes) }

func newCache(size int, maxBytes int64) *Cache {
	if size < 0 {
		return nil
	}
	if size == 0 {
		size = DefaultSize
	}
	c := &Cache{maxBytes: maxBytes}
	l, err := lru.NewWithEvict(size, func(_ string, e entry) { c.bytes -= e.bytes })
	if err != nil {
		panic(err) // only for size <= 0, ruled out above
	}
	c.lru = l
	return c
}

// put adds e for instance and evicts the least recently used entries until
// the events fit the byte budget. Called under mu.
func (c *Cache) put(instance string, e entry) {
	c.lru.Remove(instance) // counts its bytes out: Add replacing a value would not
	if e.bytes > c.maxBytes/4 {
		return
	}
	if c.lru.Add(instance, e) {
		c.evictions.Add(1)
	}
	c.bytes += e.bytes
	for c.bytes > c.maxBytes {
		c.lru.RemoveOldest()
		c.evictions.Add(1)
	}
}

// eventBytes approximates the memory an event holds: its fields and the
// strings they point to.
func eventBytes(events []provider.Event) int64 {
	const fields = 256
	var n int64
	for _, e := range events {
		n += fields + int64(len(e.Name)+len(e.Version)+len(e.Input)+len(e.Output)+len(e.Instance)+
			len(e.ParentInstance)+len(e.Reason)+len(e.Key)+len(e.Owner))
		if e.Error != nil {
			n += fields + int64(len(e.Error.Message))
		}
		if e.CustomStatus != nil {
			n += int64(len(*e.CustomStatus))
		}
		n += int64(len(e.Tag)+len(e.Session)) + mapBytes(e.Headers) + mapBytes(e.Values)
	}
	return n
}

// mapBytes approximates the memory of a decoded string map: its table (a
// header, then two string headers per entry) and its keys and values.
func mapBytes(m map[string]string) int64 {
	const table, entry = 64, 32
	if len(m) == 0 {
		return 0
	}
	n := int64(table)
	for k, v := range m {
		n += int64(entry + len(k) + len(v))
	}
	return n
}

// Known returns the cached history of the instance's execution, the
// incarnation it belongs to and the stored form of its last event; ok is
// false when there is none. The events must not be modified; appending to
// the slice copies it.
func (c *Cache) Known(instance string, execution int64) (events []provider.Event, incarnation int64, last string, ok bool) {
	if c == nil {
		return nil, 0, "", false
	}
	e, ok := c.lru.Get(instance)
	if !c.counted(ok && e.execution == execution && len(e.events) > 0) {
		return nil, 0, "", false
	}
	return slices.Clip(e.events), e.incarnation, e.last, true
}

// Latest returns what the cache holds of the instance, whichever execution
// it is; ok is false when nothing. The events must not be modified.
func (c *Cache) Latest(instance string) (events []provider.Event, incarnation, execution int64, ok bool) {
	if c == nil {
		return nil, 0, 0, false
	}
	e, ok := c.lru.Get(instance)
	if !c.counted(ok && len(e.events) > 0) {
		return nil, 0, 0, false
	}
	return slices.Clip(e.events), e.incarnation, e.execution, true
}

// Holds reports, with its incarnation, whether the cache holds the
// instance's execution ending at event lastEvent: what a quiet ack
// (provider.ActivityResult.QuietAfter) must find unchanged in the store.
func (c *Cache) Holds(instance string, execution, lastEvent int64) (incarnation int64, ok bool) {
	events, incarnation, cached, ok := c.Latest(instance)
	if !ok || cached != execution || incarnation == 0 || events[len(events)-1].ID != lastEvent {
		return 0, false
	}
	return incarnation, true
}

// Store records the whole history of an execution of the instance's
// incarnation, read from the store or written by the ack that created the
// instance; last is the stored form of its last event. An empty history is
// not kept.
func (c *Cache) Store(instance string, incarnation, execution int64, events []provider.Event, last string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(events) == 0 {
		c.lru.Remove(instance)
		return
	}
	c.put(instance, entry{incarnation: incarnation, execution: execution, events: slices.Clip(events), last: last,
		bytes: eventBytes(events)})
}

// Extend appends events a committed ack of a cached instance wrote, with the
// stored form of the last one. They are kept when they continue the cached
// history of the same execution (the next event ID), or start its next
// execution (event 1); otherwise the instance is forgotten and its next
// fetch reads it whole.
func (c *Cache) Extend(instance string, execution int64, events []provider.Event, last string) {
	c.extend(instance, execution, events, last, nil)
}

// extend is Extend that also applies an ack's custom status update (nil:
// unchanged) to the custom status the entry knows.
func (c *Cache) extend(instance string, execution int64, events []provider.Event, last string, custom *provider.CustomStatusUpdate) {
	if c == nil || len(events) == 0 {
		return
	}
	for i := 1; i < len(events); i++ {
		if events[i].ID != events[i-1].ID+1 {
			c.Forget(instance)
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Peek(instance)
	switch {
	case ok && e.execution == execution && e.events[len(e.events)-1].ID >= events[len(events)-1].ID &&
		e.events[0].ID <= events[0].ID:
		// Already cached: a read of the store that saw the commit came first.
	case ok && events[0].ID == 1 && execution > e.execution:
		// A custom status is carried over a continue-as-new.
		c.put(instance, entry{incarnation: e.incarnation, execution: execution, events: slices.Clone(events), last: last,
			bytes: eventBytes(events), custom: applyCustom(e.custom, custom), customKnown: e.customKnown})
	case ok && e.execution == execution && e.events[len(e.events)-1].ID+1 == events[0].ID:
		c.put(instance, entry{incarnation: e.incarnation, execution: execution, events: append(e.events, events...), last: last,
			bytes: e.bytes + eventBytes(events), custom: applyCustom(e.custom, custom), customKnown: e.customKnown})
	default:
		c.lru.Remove(instance)
	}
}

// Acked adds the events a committed ack of instance wrote: all of them when
// the ack created the instance (as incarnation), else as Extend does. They
// are decoded from their stored form, so the next turn replays exactly what
// a read from the store would give.
func (c *Cache) Acked(instance string, created bool, incarnation int64, enc encode.Ack) {
	if c == nil || instance == "" {
		return
	}
	if len(enc.Events) == 0 {
		if enc.CustomStatus != nil {
			c.Forget(instance) // a change the cached state would not show
		}
		return
	}
	events := make([]provider.Event, 0, len(enc.Events))
	for _, e := range enc.Events {
		ev, err := provider.DecodeEvent(e.Data)
		if err != nil {
			c.Forget(instance)
			return
		}
		events = append(events, ev)
	}
	last := enc.Events[len(enc.Events)-1].Data
	if created {
		c.Store(instance, incarnation, enc.ExecutionID, events, last)
		c.NoteCustomStatus(instance, enc.ExecutionID, events[len(events)-1].ID, applyCustom(nil, enc.CustomStatus))
		return
	}
	c.extend(instance, enc.ExecutionID, events, last, enc.CustomStatus)
}

func applyCustom(v *string, u *provider.CustomStatusUpdate) *string {
	switch {
	case u == nil:
		return v
	case u.Clear:
		return nil
	}
	value := u.Value
	return &value
}

// NoteCustomStatus records the instance's custom status as of event
// lastEvent of execution, read with that history (a fetch's), so that a
// turn can be built from the cache alone (Turn). Ignored when the cache holds
// another state of the instance.
func (c *Cache) NoteCustomStatus(instance string, execution, lastEvent int64, value *string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Peek(instance)
	if !ok || e.execution != execution || e.events[len(e.events)-1].ID != lastEvent {
		return
	}
	e.custom, e.customKnown = value, true
	c.lru.Add(instance, e) // the same key: replaced in place, its bytes unchanged
}

// Forget drops the instance.
func (c *Cache) Forget(instance string) {
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.lru.Remove(instance)
	}
}

// NewIncarnation returns a random, non-zero incarnation for an instance the
// store is creating (0 marks instances created before stores kept one).
func NewIncarnation() int64 {
	for {
		if n := rand.Int64(); n != 0 {
			return n
		}
	}
}
