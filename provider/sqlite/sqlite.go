// Package sqlite is the embedded duroxide-go provider: one SQLite file in WAL
// mode, or an in-memory database, on a pure-Go driver (no cgo), with the schema
// migrated on open. It implements provider.Provider and provider.Admin.
//
// Locking follows duroxide's SQLite design: an instance_locks table grants one
// holder per instance, fetched messages are tagged with the holder's lock token
// so that an ack deletes exactly them, visible_at delays timers and backoff, and
// locks expire so that a crashed holder's work is retried. Every write runs in a
// BEGIN IMMEDIATE transaction, so concurrent writers, in this process or others
// sharing the file, queue on SQLite's lock instead of failing mid-transaction.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/group"
	"github.com/duroxide/duroxide-go/provider/internal/storeengine"

	sqlitedriver "modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Options tune a provider. The zero value is usable.
type Options struct {
	// PollInterval bounds how long a waiting fetch or Watch sleeps before looking
	// again for work written by other processes or that became visible with time.
	// Work enqueued through the same Provider wakes waiters at once. Default 50ms.
	PollInterval time.Duration
	// BusyTimeout is how long a write waits for another connection's write lock
	// before failing with a retryable error. Default 30s.
	BusyTimeout time.Duration
	// Durable makes every commit wait for fsync (synchronous=FULL). By default,
	// WAL with synchronous=NORMAL survives process crashes but may lose the last
	// commits on power loss.
	Durable bool
	// HistoryCache is how many executions' decoded histories the provider
	// keeps in memory, so a turn reads and decodes only the events added
	// since the last turn it saw. Default histcache.DefaultSize (4096), and
	// never more than histcache.MaxBytes (64 MiB) of events; negative turns
	// the cache off.
	HistoryCache int
	// MeterProvider receives the store's metrics: its write batches and
	// history cache (default: the global one, otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
}

func (o Options) withDefaults() Options {
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 50 * time.Millisecond
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 30 * time.Second
	}
	return o
}

// Provider is a SQLite-backed provider.Provider and provider.Admin.
type Provider struct {
	db    *sql.DB
	stmts *statementCache
	opts  Options
	path  string

	// writes runs this process's write transactions one at a time
	// (write_batch.go), so they never spin on SQLite's busy handler against
	// each other and callers arriving together share a commit; other
	// processes are held off by BEGIN IMMEDIATE.
	writes  *group.Group[writeWork]
	batches atomic.Int64 // write transactions run (a batch each), for tests

	// eng is the store engine this store drives: fetch and commit
	// routing, the history cache, timer notes and wake-ups.
	eng *storeengine.Engine

	closeOnce sync.Once
	closed    chan struct{}
}

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Admin    = (*Provider)(nil)
)

// Open opens (creating if needed) the database file at path and migrates it.
func Open(ctx context.Context, path string, opts Options) (*Provider, error) {
	if path == "" {
		return nil, fmt.Errorf("open sqlite provider: empty path (use OpenMemory for an in-memory store)")
	}
	opts = opts.withDefaults()
	db, err := sql.Open("sqlite", fileDSN(path, opts))
	if err != nil {
		return nil, fmt.Errorf("open sqlite provider %s: %w", path, err)
	}
	// Keep the connections open: a new one reads the schema and prepares every
	// statement again. database/sql keeps only 2 idle by default, and a busy
	// runtime reads on several at once while one writes.
	db.SetMaxIdleConns(maxIdleConns)
	return newProvider(ctx, db, path, opts)
}

// OpenMemory opens a fresh in-memory store. It lives until Close; nothing is
// shared with other providers.
func OpenMemory(ctx context.Context, opts Options) (*Provider, error) {
	opts = opts.withDefaults()
	name := "duroxide-" + uuid.NewString()
	dsn := "file:" + name + "?mode=memory&cache=shared&" + commonParams(opts, false)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open in-memory sqlite provider: %w", err)
	}
	// One connection keeps the database alive and avoids shared-cache table locks.
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return newProvider(ctx, db, ":memory:", opts)
}

func fileDSN(path string, opts Options) string {
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + commonParams(opts, true)
}

func commonParams(opts Options, wal bool) string {
	q := []string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", nativeBusyTimeout.Milliseconds()),
		"_txlock=immediate",
		// Savepoint journals (one per ack of a batch, see runInSavepoint) stay
		// in memory: in a temporary file every page they save cost a write call.
		"_pragma=temp_store(MEMORY)",
	}
	if wal {
		q = append(q, "_pragma=journal_mode(WAL)")
	}
	if opts.Durable {
		q = append(q, "_pragma=synchronous(FULL)")
	} else {
		q = append(q, "_pragma=synchronous(NORMAL)")
	}
	return strings.Join(q, "&")
}

func newProvider(ctx context.Context, db *sql.DB, path string, opts Options) (*Provider, error) {
	if err := migrate(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrate sqlite store %s: %w", path, err)
	}
	p := &Provider{
		db:     db,
		stmts:  newStatementCache(db),
		opts:   opts,
		path:   path,
		writes: newWriteQueue(),
		closed: make(chan struct{}),
	}
	p.eng = storeengine.New(driver{p}, storeengine.Config{HistoryCache: opts.HistoryCache, PollInterval: opts.PollInterval, Closed: p.closed,
		MeterProvider: opts.MeterProvider, Store: "sqlite"})
	return p, nil
}

// Path is the database file the provider was opened on (":memory:" for memory).
func (p *Provider) Path() string { return p.path }

// Close closes the database; waiting fetches and watches end.
func (p *Provider) Close() error {
	var err error
	p.closeOnce.Do(func() {
		// The queue stops before anything sees the store closed: a writer
		// waiting then is refused, never run after Close began.
		p.writes.Stop()
		close(p.closed)
		p.writes.WaitLeaders() // the transaction under way commits or fails first
		p.stmts.close()
		err = p.db.Close()
	})
	return err
}

// DB exposes the underlying database for tests and tools that inspect or repair
// stored rows. Writing through it bypasses the provider's invariants.
func (p *Provider) DB() *sql.DB { return p.db }

func nowMs() int64 { return time.Now().UnixMilli() }

func newToken() string { return uuid.NewString() }

// nativeBusyTimeout is SQLite's own wait for a locked database. It is short on
// purpose: SQLite's busy handler sleeps in growing steps up to 100ms, so under
// contention from other processes a waiter keeps missing the moments the lock
// is free. writeTx retries with short random sleeps instead, up to BusyTimeout.
const nativeBusyTimeout = 100 * time.Millisecond

// maxIdleConns is how many connections a file store keeps open between uses.
const maxIdleConns = 16

// classify wraps err as a provider error unless it already is one (nil stays
// nil). SQLite busy and locked conditions, and cancelled contexts, are
// retryable.
func classify(op, instance string, err error) error {
	if err == nil {
		return nil
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return err
	}
	if isBusy(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return provider.Retryable(op, instance, err)
	}
	return provider.Permanent(op, instance, err)
}

// isBusy reports whether err is SQLite saying another connection holds a lock.
func isBusy(err error) bool {
	var se *sqlitedriver.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff // extended codes keep the primary code in the low byte
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}
