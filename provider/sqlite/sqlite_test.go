package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/providertest"
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

// A first turn commits without a lock row: an expired lock row of its
// instance (a handed-back turn whose delay passed) is released with it, and a
// live one refuses the direct start.
func TestFirstTurnReleasesAnExpiredLockAndYieldsToALiveOne(t *testing.T) {
	p, ctx := openBatchStore(t)
	now := time.Now().UnixMilli()
	for _, lock := range []struct {
		instance string
		until    int64
	}{{"expired", now - 1000}, {"live", now + 60_000}} {
		if _, err := p.db.ExecContext(ctx, `INSERT INTO instance_locks (instance_id, lock_token, locked_until, locked_at) VALUES (?, ?, ?, ?)`,
			lock.instance, "token-"+lock.instance, lock.until, now-2000); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		instance    string
		wantCreated bool
		wantLocks   int
	}{{"expired", true, 0}, {"live", false, 1}} {
		item := &provider.OrchestrationItem{Instance: c.instance, ExecutionID: 1, OrchestrationName: "O"}
		created, _, err := providertest.CommitFirstTurn(ctx, p, c.instance, completeFirstTurn(item), nil, time.Minute)
		if err != nil || created != c.wantCreated {
			t.Fatalf("%s: created %v, %v; want created %v", c.instance, created, err, c.wantCreated)
		}
		var locks int
		if err := p.db.QueryRowContext(ctx, `SELECT count(*) FROM instance_locks WHERE instance_id = ?`, c.instance).Scan(&locks); err != nil {
			t.Fatal(err)
		}
		if locks != c.wantLocks {
			t.Fatalf("%s: %d lock rows after the first turn, want %d", c.instance, locks, c.wantLocks)
		}
	}
}
