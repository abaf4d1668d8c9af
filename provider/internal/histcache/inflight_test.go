package histcache

import (
	"slices"
	"testing"
	"time"
)

func TestInFlight(t *testing.T) {
	var f InFlight
	f.Add("a")
	f.Add("b")
	f.Done("a")
	if got := f.List(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("in flight %v, want [b]", got)
	}
	f.since["b"] = time.Now().Add(-inFlightFor - time.Second) // never reported back
	if got := f.List(); len(got) != 0 || len(f.since) != 0 {
		t.Fatalf("in flight %v (%d kept), want none", got, len(f.since))
	}
}
