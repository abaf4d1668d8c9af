// Command duroxide inspects and manages orchestration instances in a store
// directly, without Kubernetes: start, raise events, terminate, wait, show
// status and history, list, delete and purge, and the store's counters; it
// replays recorded histories against code (`replay`) and checks code for
// nondeterminism (`vet`).
//
//	DUROXIDE_STORE=postgres://... duroxide list --status Running
//	duroxide --store /tmp/demo.db history hello
//
// The store is a PostgreSQL connection string or a SQLite file. Prefer the
// environment to --store for connection strings with a password: flags show
// up in process listings.
//
// This build's `replay` knows the sample orchestrations. To replay your own,
// build a duroxide with your registry: os.Exit(cli.Main(yourRegistry)).
package main

import (
	"os"

	"github.com/duroxide/duroxide-go/cli"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/samples"
)

func main() {
	reg := runtime.NewRegistry()
	samples.Register(reg)
	os.Exit(cli.Main(reg))
}
