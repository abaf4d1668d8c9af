// Command bench measures the runtime on PostgreSQL and SQLite. Per scenario
// and provider it prints one line:
//
//	RESULT scenario=<name> provider=<postgres|sqlite> n=<instances> wall_s=<x> orch_per_s=<x> act_per_s=<x> mean_ms=<x> p99_ms=<x>
//
// and a progress line on stderr while it runs. `make bench` runs it against a
// throwaway PostgreSQL; -pg (or DUROXIDE_TEST_POSTGRES_URL) points it at another.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
)

type config struct {
	scenarios, providers []string
	pgURL                string
	hello, chain, timer  int
	latency              int
	fanoutFor            time.Duration
	fanoutInFlight       int
	starters             int
	orchConcurrency      int
	actConcurrency       int
	pgConns              int
	verbose              bool
}

func main() {
	var c config
	scenarios := flag.String("scenario", "hello,fanout,chain,timer,latency", "scenarios to run, comma-separated")
	providers := flag.String("provider", "postgres,sqlite", "providers to run, comma-separated")
	flag.StringVar(&c.pgURL, "pg", os.Getenv("DUROXIDE_TEST_POSTGRES_URL"), "PostgreSQL connection string")
	flag.IntVar(&c.hello, "hello-n", 1000, "hello: instances started at once")
	flag.IntVar(&c.chain, "chain-n", 300, "chain: instances started at once")
	flag.IntVar(&c.timer, "timer-n", 1000, "timer: instances started at once")
	flag.IntVar(&c.latency, "latency-n", 200, "latency: instances run one after another")
	flag.DurationVar(&c.fanoutFor, "fanout-duration", 10*time.Second, "fanout: how long to keep instances in flight")
	flag.IntVar(&c.fanoutInFlight, "fanout-inflight", 20, "fanout: instances kept in flight")
	flag.IntVar(&c.starters, "starters", 16, "concurrent starters for the at-once scenarios")
	flag.IntVar(&c.orchConcurrency, "orch-concurrency", 8, "orchestration dispatcher concurrency")
	flag.IntVar(&c.actConcurrency, "act-concurrency", 32, "activity dispatcher concurrency")
	flag.IntVar(&c.pgConns, "pg-conns", 32, "PostgreSQL pool size")
	flag.BoolVar(&c.verbose, "v", false, "log the runtime to stderr")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	c.scenarios, c.providers = strings.Split(*scenarios, ","), strings.Split(*providers, ",")
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(c config) error {
	for _, prov := range c.providers {
		for _, name := range c.scenarios {
			sc, ok := scenarios[name]
			if !ok {
				return fmt.Errorf("unknown scenario %q", name)
			}
			res, err := runOne(c, prov, name, sc)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", name, prov, err)
			}
			fmt.Printf("RESULT scenario=%s provider=%s n=%d wall_s=%.2f orch_per_s=%.1f act_per_s=%.1f mean_ms=%.2f p99_ms=%.2f\n",
				name, prov, res.n, res.wall.Seconds(), float64(res.n)/res.wall.Seconds(),
				float64(res.activities)/res.wall.Seconds(), ms(res.latency.mean()), ms(res.latency.quantile(0.99)))
			if name == "latency" || name == "timer" {
				fmt.Printf("DETAIL scenario=%s provider=%s p50_ms=%.2f p90_ms=%.2f max_ms=%.2f\n", name, prov,
					ms(res.latency.quantile(0.5)), ms(res.latency.quantile(0.9)), ms(res.latency.quantile(1)))
			}
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// env is one scenario run's store, runtime and client.
type env struct {
	cfg     config
	store   store
	client  *runtime.Client
	tracker *tracker
}

type store interface {
	provider.Provider
	provider.Admin
}

func runOne(c config, prov, name string, sc scenario) (result, error) {
	ctx := context.Background()
	st, cleanup, err := openStore(ctx, c, prov)
	if err != nil {
		return result{}, err
	}
	defer cleanup()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if c.verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	reg := runtime.NewRegistry()
	registerBenchCode(reg)
	rt := runtime.New(st, reg, runtime.Options{
		OrchestrationConcurrency: c.orchConcurrency, ActivityConcurrency: c.actConcurrency, Logger: logger,
		PollTimeout: 2 * time.Second,
	})
	if err := rt.Start(ctx); err != nil {
		return result{}, err
	}
	defer func() { _ = rt.Shutdown(context.Background()) }()
	tr, err := newTracker(ctx, st)
	if err != nil {
		return result{}, err
	}
	defer tr.stop()
	fmt.Fprintf(os.Stderr, "bench: %s on %s\n", name, prov)
	return sc(ctx, &env{cfg: c, store: st, client: runtime.NewClient(st), tracker: tr})
}

func openStore(ctx context.Context, c config, prov string) (store, func(), error) {
	switch prov {
	case "postgres":
		if c.pgURL == "" {
			return nil, nil, fmt.Errorf("no PostgreSQL: set -pg or DUROXIDE_TEST_POSTGRES_URL (make bench starts one)")
		}
		schema := fmt.Sprintf("bench_%d", time.Now().UnixNano())
		p, err := postgres.Open(ctx, c.pgURL, postgres.Options{Schema: schema, MaxConns: int32(c.pgConns)})
		if err != nil {
			return nil, nil, err
		}
		return p, func() { _ = p.DropSchema(context.Background()); _ = p.Close() }, nil
	case "sqlite":
		dir, err := os.MkdirTemp("", "duroxide-bench-")
		if err != nil {
			return nil, nil, err
		}
		p, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"), sqlite.Options{})
		if err != nil {
			return nil, nil, err
		}
		return p, func() { _ = p.Close(); _ = os.RemoveAll(dir) }, nil
	}
	return nil, nil, fmt.Errorf("unknown provider %q", prov)
}
