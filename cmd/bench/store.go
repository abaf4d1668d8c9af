package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/sqlite"
)

// storeHandle is one scenario's store: a fresh PostgreSQL schema or SQLite
// file that can be closed (so the server flushes its statistics), opened
// again and finally removed.
type storeHandle struct {
	cfg     config
	prov    string
	tuned   bool
	schema  string // postgres
	dir     string // sqlite
	current store
}

func createStore(ctx context.Context, c config, prov string, tuned bool) (*storeHandle, error) {
	h := &storeHandle{cfg: c, prov: prov, tuned: tuned}
	switch prov {
	case "postgres":
		if c.pgURL == "" {
			return nil, errors.New("no PostgreSQL: set -pg or DUROXIDE_TEST_POSTGRES_URL (make bench starts one)")
		}
		h.schema = fmt.Sprintf("bench_%d", time.Now().UnixNano())
	case "sqlite":
		dir, err := os.MkdirTemp("", "duroxide-bench-")
		if err != nil {
			return nil, err
		}
		h.dir = dir
	default:
		return nil, fmt.Errorf("unknown provider %q", prov)
	}
	if _, err := h.open(ctx); err != nil {
		h.remove()
		return nil, err
	}
	return h, nil
}

func (h *storeHandle) open(ctx context.Context) (store, error) {
	var (
		st  store
		err error
	)
	switch h.prov {
	case "postgres":
		opts := postgres.Options{Schema: h.schema}
		if h.tuned {
			opts.MaxConns = int32(h.cfg.pgConns)
		}
		st, err = postgres.Open(ctx, h.cfg.pgURL, opts)
	case "sqlite":
		st, err = sqlite.Open(ctx, filepath.Join(h.dir, "bench.db"), sqlite.Options{})
	}
	if err != nil {
		return nil, err
	}
	h.current = st
	return st, nil
}

// settle closes the store and, on PostgreSQL, waits until its backends have
// exited: a backend reports its statistics when it exits.
func (h *storeHandle) settle(ctx context.Context) error {
	if h.current != nil {
		if err := h.current.Close(); err != nil {
			return err
		}
		h.current = nil
	}
	if h.prov != "postgres" {
		return nil
	}
	conn, err := connect(ctx, h.cfg.pgURL)
	if err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var n int
		err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'duroxide-go'`).Scan(&n)
		if err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		if n == 0 {
			return nil
		}
	}
	return errors.New("settle: the store's connections did not close within 10s")
}

func (h *storeHandle) remove() {
	if h.current != nil {
		_ = h.current.Close()
	}
	if h.cfg.keep {
		fmt.Fprintf(os.Stderr, "bench: kept %s%s\n", h.schema, h.dir)
		return
	}
	switch h.prov {
	case "postgres":
		ctx := context.Background()
		if conn, err := connect(ctx, h.cfg.pgURL); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{h.schema}.Sanitize()+" CASCADE")
			_ = conn.Close(ctx)
		}
	case "sqlite":
		_ = os.RemoveAll(h.dir)
	}
}
