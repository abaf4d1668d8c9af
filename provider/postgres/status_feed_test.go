package postgres

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Announced changes survive the payload whole, split over payloads under
// PostgreSQL's limit; an instance named only, as earlier releases announce,
// is read back as an ID.
func TestStatusPayloadsCarryChanges(t *testing.T) {
	var changes []announcedChange
	for i := range 300 {
		changes = append(changes, announcedChange{Instance: fmt.Sprintf("instance-%03d", i), ExecutionID: 1, Status: "Completed",
			CustomStatusVersion: int64(i % 3), Seq: int64(1000 + i), Xid: int64(5000 + i)})
	}
	changes = append(changes, announcedChange{Instance: "named-only"})
	payloads := statusPayloads(changes)
	if len(payloads) < 2 {
		t.Fatalf("%d payloads for %d changes, want them split", len(payloads), len(changes))
	}
	var ids []string
	var got []announcedChange
	for _, p := range payloads {
		if len(p) > maxPayload {
			t.Fatalf("payload of %d bytes", len(p))
		}
		i, c := parseStatusPayload(p)
		ids, got = append(ids, i...), append(got, c...)
	}
	if !slices.Equal(got, changes[:300]) || !slices.Equal(ids, []string{"named-only"}) {
		t.Fatalf("read back %d changes and ids %v", len(got), ids)
	}
	if ids, c := parseStatusPayload(`["a","b"]`); !slices.Equal(ids, []string{"a", "b"}) || c != nil {
		t.Fatalf("an earlier release's payload: %v %v", ids, c)
	}
	if ids, c := parseStatusPayload(strings.Repeat("x", 10)); ids != nil || c != nil {
		t.Fatal("a foreign payload read as announcements")
	}
}

// A watcher takes a change once, the latest of its instance, in the order
// the changes were made.
func TestStatusSubKeepsTheLatestChange(t *testing.T) {
	var f statusFeed
	s := f.subscribe()
	f.publish([]string{"x"}, []announcedChange{{Instance: "b", Seq: 5}, {Instance: "a", Seq: 3}})
	f.publish(nil, []announcedChange{{Instance: "a", Seq: 7}, {Instance: "b", Seq: 4}})
	ids, changes := s.take()
	if !slices.Equal(ids, []string{"x"}) || len(changes) != 2 || changes[0] != (announcedChange{Instance: "b", Seq: 5}) ||
		changes[1] != (announcedChange{Instance: "a", Seq: 7}) {
		t.Fatalf("took %v %v", ids, changes)
	}
	if ids, changes := s.take(); ids != nil || changes != nil {
		t.Fatalf("taken twice: %v %v", ids, changes)
	}
}
