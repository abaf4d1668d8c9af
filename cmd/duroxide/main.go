// Command duroxide inspects and manages orchestration instances in a store
// directly, without Kubernetes: start, raise events, terminate, wait, show
// status and history, list, delete and purge, and the store's counters.
//
//	DUROXIDE_STORE=postgres://... duroxide list --status Running
//	duroxide --store /tmp/demo.db history hello
//
// The store is a PostgreSQL connection string or a SQLite file. Prefer the
// environment to --store for connection strings with a password: flags show
// up in process listings.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
