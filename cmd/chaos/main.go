// Command chaos runs orchestrations on several worker processes sharing one
// store while it kills a random worker (SIGKILL) every 1–3 s and, on
// PostgreSQL, crash-restarts the server once (pg_ctl stop -m immediate).
// Afterwards every instance must have Completed with the right output, each
// activity result must be in its history exactly once, and the queues must be
// empty. It prints one RESULT line and exits 1 when anything was lost, wrong
// or recorded twice.
//
//	hack/test-postgres.sh run go run ./cmd/chaos --store postgres
//	go run ./cmd/chaos --store sqlite
//
// `make chaos` runs a larger run on both stores; .ci/run a small one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/sqlite"
)

type config struct {
	store          string
	orchestrations int
	workers        int
	limit          time.Duration
	duration       time.Duration
	stepDelay      time.Duration
	dir            string // SQLite file and execution logs
	schema         string
	pgURL, pgDir   string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		if err := runWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "chaos worker:", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	ok, err := run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.StringVar(&c.store, "store", "postgres", "postgres (DUROXIDE_TEST_POSTGRES_URL) or sqlite")
	fs.IntVar(&c.orchestrations, "orchestrations", 200, "orchestrations to run")
	fs.IntVar(&c.workers, "workers", 3, "worker processes")
	fs.DurationVar(&c.limit, "limit", 5*time.Minute, "give up when the run has not finished after this long")
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "starts are spread over this long, and faults injected meanwhile")
	fs.DurationVar(&c.stepDelay, "step-delay", 100*time.Millisecond, "how long each activity works")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.orchestrations < 1 || c.workers < 1 {
		return c, errors.New("--orchestrations and --workers must be positive")
	}
	dir, err := os.MkdirTemp("", "dxchaos")
	if err != nil {
		return c, err
	}
	c.dir = dir
	switch c.store {
	case "postgres":
		c.pgURL = os.Getenv("DUROXIDE_TEST_POSTGRES_URL")
		if c.pgURL == "" {
			return c, errors.New("--store postgres needs DUROXIDE_TEST_POSTGRES_URL (run under hack/test-postgres.sh run)")
		}
		// Set by hack/test-postgres.sh run when it owns the server: then the
		// server can be crash-restarted.
		c.pgDir = os.Getenv("DUROXIDE_TEST_POSTGRES_DIR")
		if c.pgDir == "" {
			fmt.Fprintln(os.Stderr, "chaos: the PostgreSQL server is not ours to restart (DUROXIDE_TEST_POSTGRES_DIR unset): no crash-restart in this run")
		}
		c.schema = fmt.Sprintf("chaos_%d", time.Now().UnixNano()%1_000_000_000)
	case "sqlite":
	default:
		return c, fmt.Errorf("--store %q: want postgres or sqlite", c.store)
	}
	return c, nil
}

// open opens the run's store. Errors never name the connection string.
func (c config) open(ctx context.Context, logger *slog.Logger) (provider.Provider, error) {
	if c.store == "sqlite" {
		return sqlite.Open(ctx, filepath.Join(c.dir, "store.db"), sqlite.Options{})
	}
	return postgres.Open(ctx, c.pgURL, postgres.Options{Schema: c.schema, MaxConns: 8, Logger: logger})
}

// workerArgs passes the store to a worker process.
func (c config) workerArgs() []string {
	return []string{"worker", "--store", c.store, "--dir", c.dir, "--schema", c.schema, "--step-delay", c.stepDelay.String()}
}
