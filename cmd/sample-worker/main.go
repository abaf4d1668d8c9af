// Command sample-worker is a WorkerPool worker that runs the demo
// orchestrations (package samples). It takes its settings from the
// environment a WorkerPool sets (see package worker), and exports metrics
// and spans over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (package
// otlp); outside a cluster:
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

	"github.com/duroxide/duroxide-go/otlp"
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
	w := worker.New(reg, cfg, logger)
	w.Exporters = otlp.FromEnv
	if err := w.Run(ctx); err != nil {
		logger.Error("worker stopped", "error", err.Error())
		os.Exit(1)
	}
}
