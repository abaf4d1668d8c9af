package provider

import (
	"testing"
	"time"
)

func TestListCursorRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 123456000, time.UTC)
	c, err := ParseListCursor(ListCursor{CreatedAt: at, Instance: "order:42"}.String())
	if err != nil || !c.CreatedAt.Equal(at) || c.Instance != "order:42" {
		t.Fatalf("round trip: %+v, %v (microseconds must survive: a cursor cut to milliseconds skips rows)", c, err)
	}
	for _, bad := range []string{"x", "bm90LWEtY3Vyc29y", ListCursor{}.String()[:2]} {
		if _, err := ParseListCursor(bad); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}

func TestNextPage(t *testing.T) {
	at := time.Now()
	infos := []InstanceInfo{{Instance: "c", CreatedAt: at}, {Instance: "b", CreatedAt: at}, {Instance: "a", CreatedAt: at}}
	if p := NextPage(infos[:2], 2); p.Next != "" || len(p.Instances) != 2 {
		t.Errorf("a full last page: %+v", p)
	}
	p := NextPage(infos, 2)
	c, err := ParseListCursor(p.Next)
	if len(p.Instances) != 2 || err != nil || c.Instance != "b" {
		t.Errorf("a page with more: %d instances, next after %q (%v); want 2, after b", len(p.Instances), c.Instance, err)
	}
}
