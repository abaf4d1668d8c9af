// Command demo runs every sample orchestration embedded on SQLite, with no
// setup, and prints each result.
//
//	go run ./cmd/demo [-db demo.db] [-timeout 30s]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

func main() {
	dbPath := flag.String("db", "", "SQLite database file (default: a temporary file, removed afterwards)")
	timeout := flag.Duration("timeout", 30*time.Second, "how long to wait for each sample")
	verbose := flag.Bool("v", false, "log the runtime's activity to stderr")
	flag.Parse()
	if err := run(*dbPath, *timeout, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(dbPath string, timeout time.Duration, verbose bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	keep := dbPath != ""
	if dbPath == "" {
		dir, err := os.MkdirTemp("", "duroxide-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dbPath = filepath.Join(dir, "demo.db")
	}
	store, err := sqlite.Open(ctx, dbPath, sqlite.Options{})
	if err != nil {
		return err
	}
	defer store.Close()

	logOut := io.Discard
	if verbose {
		logOut = os.Stderr
	}
	reg := runtime.NewRegistry()
	samples.Register(reg)
	opts := runtime.Options{Logger: slog.New(slog.NewTextHandler(logOut, nil))}
	// A second runtime on the store stands for a pool of GPU machines: it
	// alone runs the activities tagged for them.
	for _, o := range []runtime.Options{opts, samples.GPUWorkerOptions(opts)} {
		rt := runtime.New(store, reg, o)
		if err := rt.Start(ctx); err != nil {
			return err
		}
		defer func() { _ = rt.Shutdown(context.Background()) }()
	}

	fmt.Printf("duroxide-go demo: %d samples on SQLite (%s)\n", len(samples.Demos()), dbPath)
	client := runtime.NewClient(store)
	runID := time.Now().Format("150405.000")
	results := make([]samples.Result, len(samples.Demos()))
	var wg sync.WaitGroup
	for i, d := range samples.Demos() {
		wg.Go(func() { results[i] = d.Run(ctx, client, fmt.Sprintf("demo-%s-%d", runID, i+1), timeout) })
	}
	wg.Wait()
	failed := 0
	for i, r := range results {
		if r.OK() {
			fmt.Printf("%2d. %-46s %s  (%v)\n", i+1, r.Demo.Name, r.Status.Output, r.Elapsed.Round(time.Millisecond))
			continue
		}
		failed++
		fmt.Printf("%2d. %-46s FAILED: %v\n", i+1, r.Demo.Name, r.Err)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d samples failed", failed, len(results))
	}
	fmt.Printf("all %d samples completed\n", len(results))
	if keep {
		fmt.Printf("see them: go run ./cmd/duroxide ui --store %s\n", dbPath)
	}
	return nil
}
