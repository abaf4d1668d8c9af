// Command sample-worker is a WorkerPool worker that runs the demo
// orchestrations (package samples). It takes its settings from the
// environment a WorkerPool sets (see package worker); outside a cluster:
//
//	DUROXIDE_POSTGRES_URL=postgres://... sample-worker
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
	"github.com/duroxide/duroxide-go/worker"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: sample-worker (settings come from DUROXIDE_* environment variables; see package worker)")
		os.Exit(2)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	cfg, err := worker.ConfigFromEnv(os.Getenv)
	if err != nil {
		logger.Error("invalid configuration", "error", err.Error())
		os.Exit(2)
	}
	reg := runtime.NewRegistry()
	samples.Register(reg)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := worker.Run(ctx, reg, cfg, logger); err != nil {
		logger.Error("worker stopped", "error", err.Error())
		os.Exit(1)
	}
}
