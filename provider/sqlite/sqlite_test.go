package sqlite

import (
	"context"
	"testing"
	"time"
)

// TestConnectionSettings: every connection of a file store runs in WAL mode,
// with the durability asked for, and keeps savepoint journals in memory (a
// batch's acks each run in a savepoint; in a temporary file each page they
// save cost a write call, a sixth of the CPU of a chain of activities).
func TestConnectionSettings(t *testing.T) {
	for _, durable := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		p, err := Open(ctx, t.TempDir()+"/s.db", Options{Durable: durable})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		wantSync := int64(1) // NORMAL
		if durable {
			wantSync = 2 // FULL
		}
		// Hold several connections at once so the pool opens more than one.
		for i := range 3 {
			conn, err := p.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var mode string
			var tempStore, sync int64
			if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&tempStore); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || tempStore != 2 || sync != wantSync {
				t.Errorf("durable=%v connection %d: journal_mode=%s temp_store=%d synchronous=%d, want wal, 2 (memory), %d",
					durable, i, mode, tempStore, sync, wantSync)
			}
		}
	}
}
