// Command bench measures the runtime on PostgreSQL and SQLite. Per scenario
// and provider it prints one line:
//
//	RESULT scenario=<name> provider=<postgres|sqlite> options=<default|tuned> n=<instances> wall_s=<x>
//	       orch_per_s=<x> act_per_s=<x> mean_ms=<x> p99_ms=<x> tx_per_orch=<x> bench_cpu_s=<x> server_cpu_s=<x>
//
// (on one line) and a progress line on stderr while it runs. tx_per_orch is
// the growth of pg_stat_database.xact_commit over the scenario, per instance,
// everything included (starts, Watch, polls, runtime start); server_cpu_s is
// the CPU of the PostgreSQL server's processes, readable when the server runs
// on this machine ("na" otherwise and on SQLite). "default" runs the runtime
// and provider with zero Options, "tuned" with the flags below.
//
// `make bench` runs it against a throwaway PostgreSQL; -pg (or
// DUROXIDE_TEST_POSTGRES_URL) points it at another.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

type config struct {
	scenarios, providers []string
	optionSets           []string
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
	keep                 bool
	interceptors         []runtime.Interceptor
}

func main() {
	var c config
	scenarios := flag.String("scenario", "hello,hello-local,fanout,fanout-local,chain,chain-local,timer,latency,latency-local", "scenarios to run, comma-separated")
	providers := flag.String("provider", "postgres,sqlite", "providers to run, comma-separated")
	optionSets := flag.String("options", "default,tuned", "option sets to run, comma-separated: default (zero Options) and tuned (the flags below)")
	flag.StringVar(&c.pgURL, "pg", os.Getenv("DUROXIDE_TEST_POSTGRES_URL"), "PostgreSQL connection string")
	flag.IntVar(&c.hello, "hello-n", 1000, "hello: instances started at once")
	flag.IntVar(&c.chain, "chain-n", 300, "chain: instances started at once")
	flag.IntVar(&c.timer, "timer-n", 1000, "timer: instances started at once")
	flag.IntVar(&c.latency, "latency-n", 200, "latency: instances run one after another")
	flag.DurationVar(&c.fanoutFor, "fanout-duration", 10*time.Second, "fanout: how long to keep instances in flight")
	flag.IntVar(&c.fanoutInFlight, "fanout-inflight", 20, "fanout: instances kept in flight")
	flag.IntVar(&c.starters, "starters", 16, "concurrent starters for the at-once scenarios")
	flag.IntVar(&c.orchConcurrency, "orch-concurrency", 32, "orchestration dispatcher concurrency (turn slots: local activities and eager starts need free ones)")
	flag.IntVar(&c.actConcurrency, "act-concurrency", 128, "activity dispatcher concurrency (fanout keeps 100 activities in flight)")
	flag.IntVar(&c.pgConns, "pg-conns", 32, "PostgreSQL pool size")
	flag.BoolVar(&c.verbose, "v", false, "log the runtime to stderr")
	flag.BoolVar(&c.keep, "keep", false, "keep each scenario's schema or file, to inspect it afterwards")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	instrumented := flag.String("telemetry", "", `"metrics": record the metrics with the OpenTelemetry SDK; "traces": and trace every span (exported nowhere); "traces10": one instance in ten`)
	flag.Parse()
	if *instrumented != "" {
		var stop func()
		var err error
		if c.interceptors, stop, err = instrumentation(*instrumented); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer stop()
	}
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
	c.optionSets = strings.Split(*optionSets, ",")
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(c config) error {
	m, err := newMeter(context.Background(), c.pgURL)
	if err != nil {
		return err
	}
	for _, prov := range c.providers {
		for _, opts := range c.optionSets {
			if opts != "default" && opts != "tuned" {
				return fmt.Errorf("unknown option set %q (want default or tuned)", opts)
			}
			for _, name := range c.scenarios {
				sc, ok := scenarios[name]
				if !ok {
					return fmt.Errorf("unknown scenario %q", name)
				}
				res, cost, err := runOne(c, m, prov, opts == "tuned", name, sc)
				if err != nil {
					return fmt.Errorf("%s on %s (%s options): %w", name, prov, opts, err)
				}
				printResult(name, prov, opts, res, cost)
			}
		}
	}
	return nil
}

func printResult(name, prov, opts string, res result, cost delta) {
	fmt.Printf("RESULT scenario=%s provider=%s options=%s n=%d wall_s=%.2f orch_per_s=%.1f act_per_s=%.1f mean_ms=%.2f p99_ms=%.2f %s%s\n",
		name, prov, opts, res.n, res.wall.Seconds(), float64(res.n)/res.wall.Seconds(),
		float64(res.activities)/res.wall.Seconds(), ms(res.latency.mean()), ms(res.latency.quantile(0.99)),
		cost.columns(res.n), res.extra)
	if name == "latency" || name == "timer" {
		fmt.Printf("DETAIL scenario=%s provider=%s options=%s p50_ms=%.2f p90_ms=%.2f max_ms=%.2f\n", name, prov, opts,
			ms(res.latency.quantile(0.5)), ms(res.latency.quantile(0.9)), ms(res.latency.quantile(1)))
	}
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

// runOne runs one scenario on a new schema (or file). Its cost is counted
// from after the store's creation to after the store is closed, so that
// PostgreSQL has flushed every backend's statistics.
func runOne(c config, m *meter, prov string, tuned bool, name string, sc scenario) (result, delta, error) {
	ctx := context.Background()
	h, err := createStore(ctx, c, prov, tuned)
	if err != nil {
		return result{}, delta{}, err
	}
	defer h.remove()
	// Created, closed and opened again: the creation's migrations are not
	// counted, the opening's few statements are.
	if err := h.settle(ctx); err != nil {
		return result{}, delta{}, err
	}
	st, err := h.open(ctx)
	if err != nil {
		return result{}, delta{}, err
	}
	before, err := m.read(ctx, prov == "postgres")
	if err != nil {
		return result{}, delta{}, err
	}
	res, err := runOnStore(ctx, c, st, prov, tuned, name, sc)
	if err != nil {
		return result{}, delta{}, err
	}
	if err := h.settle(ctx); err != nil {
		return result{}, delta{}, err
	}
	after, err := m.read(ctx, prov == "postgres")
	if err != nil {
		return result{}, delta{}, err
	}
	return res, before.until(after), nil
}

func runOnStore(ctx context.Context, c config, st store, prov string, tuned bool, name string, sc scenario) (result, error) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if c.verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	reg := runtime.NewRegistry()
	registerBenchCode(reg)
	opts := runtime.Options{Logger: logger, Interceptors: c.interceptors}
	if tuned {
		opts.OrchestrationConcurrency, opts.ActivityConcurrency = c.orchConcurrency, c.actConcurrency
		opts.PollTimeout = 2 * time.Second
	}
	rt := runtime.New(st, reg, opts)
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
	return sc(ctx, &env{cfg: c, store: st, client: rt.Client(), tracker: tr})
}
