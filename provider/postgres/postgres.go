// Package postgres is the production duroxide-go provider, on PostgreSQL
// through pgx/v5 and pgxpool. It implements provider.Provider and
// provider.Admin.
//
// Each contract operation is one round trip: a SQL function (see
// migrations/) or a single statement. Queue fetches use FOR UPDATE SKIP LOCKED;
// lock expiry compares against the database clock. Idle fetchers block on
// LISTEN and are woken by NOTIFY from enqueues and acks, with a poll as the
// fallback for a lost notification. A provider lives in one schema; providers
// on different schemas of one database never see each other's work.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/internal/group"
	"github.com/duroxide/duroxide-go/provider/internal/storeengine"
	"github.com/duroxide/duroxide-go/provider/internal/wake"
)

// DefaultSchema is the schema used when Options.Schema is empty.
const DefaultSchema = "duroxide"

// Options tune a provider. The zero value is usable.
type Options struct {
	// Schema holds the provider's tables; created if missing. Lower-case
	// letters, digits and underscores, at most 40 characters, not starting with
	// a digit or "pg_". Default "duroxide".
	Schema string
	// PollInterval bounds how long a waiting fetch or Watch sleeps when no
	// notification arrives (a lost NOTIFY, a broken listener). Default 1s.
	PollInterval time.Duration
	// MaxConns caps the pool (default: pgxpool's, max(4, CPUs)).
	MaxConns int32
	// Logger receives the listener's connection problems and says when the
	// schema's SQL functions are newer than this build's (default
	// slog.Default()).
	Logger *slog.Logger
	// RequireSchema makes Open fail with ErrSchemaNotFound instead of creating
	// a missing schema: for tools that inspect a store, where a mistyped
	// schema must not silently become a new, empty one.
	RequireSchema bool
	// HistoryCache is how many executions' decoded histories the provider
	// keeps in memory, so a turn's fetch returns and decodes only the events
	// added since the last turn this process saw. Default
	// histcache.DefaultSize (4096), and never more than histcache.MaxBytes
	// (64 MiB) of events; negative turns the cache off.
	HistoryCache int
	// MeterProvider receives the store's metrics: its commit batches and
	// history cache (default: the global one, otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
}

// ErrSchemaNotFound is Open's error for a missing schema with RequireSchema.
var ErrSchemaNotFound = errors.New("schema not found")

// ErrInvalidSchema is ValidateSchema's error, and Open's for such a schema.
var ErrInvalidSchema = errors.New("invalid schema name")

var schemaPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}$`)

// ValidateSchema reports whether name is acceptable as a provider schema.
func ValidateSchema(name string) error {
	if !schemaPattern.MatchString(name) || strings.HasPrefix(name, "pg_") {
		return fmt.Errorf("%w %q: use 1-40 lower-case letters, digits and underscores, not starting with a digit or pg_", ErrInvalidSchema, name)
	}
	return nil
}

// Provider is a PostgreSQL-backed provider.Provider and provider.Admin.
type Provider struct {
	pool   *pgxpool.Pool
	schema string
	opts   Options
	// eng is the store engine this store drives: fetch and commit
	// routing, the history cache, timer notes and wake-ups.
	eng         *storeengine.Engine
	reconnected *wake.Signal

	notifier     *notifier
	feed         statusFeed
	notifierDone chan struct{}
	listenerDone chan struct{}
	closeOnce    sync.Once
	closed       chan struct{}
	stopListener context.CancelFunc

	commits       group.Group[commitWork] // acks waiting to share a transaction
	commitBatches atomic.Int64            // batches the group has sent, for tests
	commitSends   atomic.Int64            // transactions it sent (batches, and acks sent again alone), for tests
}

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Admin    = (*Provider)(nil)
)

// Open connects to connString (a postgres:// or postgresql:// URL, the scheme
// in any letter case, or keyword/value settings), creates and migrates the
// schema, and starts the listener. The connection string is never logged or
// returned in errors. A string that cannot work fails with
// ErrInvalidConnString, an invalid schema name with ErrInvalidSchema.
func Open(ctx context.Context, connString string, opts Options) (*Provider, error) {
	if opts.Schema == "" {
		opts.Schema = DefaultSchema
	}
	if err := ValidateSchema(opts.Schema); err != nil {
		return nil, err
	}
	if opts.MeterProvider == nil {
		opts.MeterProvider = otel.GetMeterProvider()
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	cfg, err := parseConnString(connString)
	if err != nil {
		return nil, fmt.Errorf("open postgres provider: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = quoteIdent(opts.Schema)
	cfg.ConnConfig.RuntimeParams["application_name"] = "duroxide-go"
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres provider: %w", redact(err))
	}
	// Connect before migrating, so that an unreachable server is reported as
	// such, not as a failed migration.
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres provider: %w", redact(err))
	}
	if err := migrate(ctx, pool, opts.Schema, opts.RequireSchema, opts.Logger); err != nil {
		pool.Close()
		return nil, fmt.Errorf("migrate schema %s: %w", opts.Schema, redact(err))
	}
	p := &Provider{
		pool: pool, schema: opts.Schema, opts: opts,
		reconnected: wake.NewSignal(),
		closed:      make(chan struct{}), listenerDone: make(chan struct{}),
		notifier: newNotifier(), notifierDone: make(chan struct{}),
	}
	p.eng = storeengine.New(driver{p}, storeengine.Config{HistoryCache: opts.HistoryCache, PollInterval: opts.PollInterval, Closed: p.closed,
		MeterProvider: opts.MeterProvider, Store: "postgres"})
	p.commits.MaxBatch, p.commits.MaxLeaders = maxCommitBatch, maxCommitLeaders
	lctx, stop := context.WithCancel(context.Background())
	p.stopListener = stop
	go p.listen(lctx, cfg.ConnConfig.Copy())
	go p.notifyLoop()
	return p, nil
}

// Schema is the schema the provider works in.
func (p *Provider) Schema() string { return p.schema }

// Pool exposes the connection pool for tests and tools that inspect or repair
// stored rows. Writing through it bypasses the provider's invariants.
func (p *Provider) Pool() *pgxpool.Pool { return p.pool }

// Close stops the listener and closes the pool.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		close(p.closed)
		p.stopListener()
		<-p.listenerDone
		<-p.notifierDone
		p.pool.Close()
	})
	return nil
}

// DropSchema removes the provider's schema and everything in it. For tests
// and teardown tools; the provider must not be used afterwards.
func (p *Provider) DropSchema(ctx context.Context) error {
	_, err := p.pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+quoteIdent(p.schema)+" CASCADE")
	return err
}

func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

func (p *Provider) channel(kind string) string { return p.schema + "_dx_" + kind }

func (p *Provider) signal(k channelKind) *wake.Signal {
	switch k {
	case orchestratorChannel:
		return p.eng.OrchestratorWork
	case workerChannel:
		return p.eng.WorkerWork
	default:
		return p.eng.StatusChanged
	}
}

// classify maps database errors to provider errors. The SQL functions raise
// SQLSTATE DX001..DX009 for the contract's own errors (DX007, a refused
// first turn, is read where it is raised).
func classify(op, instance string, err error) error {
	if err == nil {
		return nil
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return err
	}
	err = redact(err) // a connect error names the user and database
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		cause := errors.New(pgErr.Message)
		switch pgErr.Code {
		case "DX001":
			return provider.Permanent(op, instance, fmt.Errorf("%w: %v", provider.ErrLockNotHeld, cause))
		case "DX002":
			return provider.Permanent(op, instance, fmt.Errorf("%w: %v", provider.ErrDuplicateEvent, cause))
		case "DX003":
			return provider.Permanent(op, instance, fmt.Errorf("%w: %v", provider.ErrInvalidArgument, cause))
		case "DX004":
			return provider.Permanent(op, instance, fmt.Errorf("%w: %v", provider.ErrNotFound, cause))
		case "DX005":
			return provider.Permanent(op, instance, fmt.Errorf("%w: %v", provider.ErrInstanceRunning, cause))
		case "DX006":
			return provider.Permanent(op, instance, fmt.Errorf("%w: %v", provider.ErrInstanceFinished, cause))
		case "DX008":
			return provider.Permanent(op, instance, fmt.Errorf("%w: %v", provider.ErrStale, cause))
		case "DX009":
			return provider.Permanent(op, instance, alreadyExists(instance, pgErr.Detail))
		case "40001", "40P01", "55P03", "57014":
			return provider.Retryable(op, instance, err)
		}
		if strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "53") || strings.HasPrefix(pgErr.Code, "57P") {
			return provider.Retryable(op, instance, err)
		}
		return provider.Permanent(op, instance, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return provider.Retryable(op, instance, err)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || errors.Is(err, pgx.ErrTxClosed) {
		return provider.Retryable(op, instance, redact(err))
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return provider.Retryable(op, instance, err)
	}
	return provider.Permanent(op, instance, err)
}
