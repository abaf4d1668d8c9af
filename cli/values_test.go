package cli

import (
	"strings"
	"testing"
	"time"
)

// kv shows the durable values a running instance holds, all or one.
func TestKVShowsValues(t *testing.T) {
	store := sqliteWithWorkers(t)
	cli := func(args ...string) result { t.Helper(); return cliWith(t, store, args...) }
	if r := cli("start", "Cart", "--id", "cart-1", "--input", `{}`); r.code != 0 {
		t.Fatalf("start: exit %d %s", r.code, r.stderr)
	}
	for _, ev := range []string{`{"add":"apple","price":3}`, `{"add":"pear","price":4}`, `{"add":"fig","price":2}`} {
		if r := cli("raise", "cart-1", "cart", "--data", ev); r.code != 0 {
			t.Fatalf("raise: exit %d %s", r.code, r.stderr)
		}
	}
	want := "items=[\"apple\",\"pear\",\"fig\"]\ntotal=9\n"
	var out string
	for deadline := time.Now().Add(30 * time.Second); out != want && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out = cli("kv", "cart-1").stdout
	}
	if out != want {
		t.Fatalf("kv printed %q, want %q", out, want)
	}
	if r := cli("kv", "cart-1", "total", "-o", "json"); r.code != 0 || strings.TrimSpace(r.stdout) != "9" {
		t.Errorf("kv of one key: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := cli("kv", "cart-1", "nope"); r.code != exitFailed || !strings.Contains(r.stderr, `no value under key "nope"`) {
		t.Errorf("kv of a missing key: exit %d %q", r.code, r.stderr)
	}
	if r := cli("kv", "nobody"); r.code != exitFailed || !strings.Contains(r.stderr, "not found") {
		t.Errorf("kv of an unknown instance: exit %d %q", r.code, r.stderr)
	}
	if r := cli("kv"); r.code == 0 || !strings.Contains(r.stderr, "kv takes the instance") {
		t.Errorf("kv without arguments: exit %d %q", r.code, r.stderr)
	}
}
