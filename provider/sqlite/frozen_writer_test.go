package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/sqlite"
)

// Another process holding the file's write lock (frozen mid-write, say) does
// not stall an idle process: with nothing to do, its polls only read.
func TestIdlePollsDoNotWaitForTheWriteLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	p, err := sqlite.Open(t.Context(), path, sqlite.Options{BusyTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(t.Context(), "ROLLBACK") }()

	began := time.Now()
	item, err := provider.FetchOne(t.Context(), p, provider.FetchRequest{LockFor: time.Minute, PollFor: 0})
	if err != nil || item != nil {
		t.Fatalf("idle orchestration poll while another process holds the write lock: %v, %v", item, err)
	}
	lease, err := p.FetchWorkItem(t.Context(), provider.FetchWorkRequest{LockFor: time.Minute})
	if err != nil || lease != nil {
		t.Fatalf("idle activity poll while another process holds the write lock: %v, %v", lease, err)
	}
	if took := time.Since(began); took > time.Second {
		t.Fatalf("two idle polls took %v: they waited for the other process's write lock", took.Round(time.Millisecond))
	}
}
