package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// StepInput names one activity execution.
type StepInput struct {
	Instance string `json:"instance"`
	Step     int    `json:"step"`
}

// register adds the run's orchestration: a chain of 5 steps, a durable
// timer, then 3 steps in parallel. Its output is fixed by its input, so the
// check can tell a right result from a wrong one.
func register(reg *runtime.Registry, delay time.Duration, record func(StepInput)) {
	runtime.RegisterActivity(reg, "Step", func(ctx context.Context, in StepInput) (int, error) {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		record(in)
		return in.Step * in.Step, nil
	})
	runtime.RegisterOrchestration(reg, "Chaos", func(ctx *runtime.OrchestrationContext, id string) (string, error) {
		out := id + ":"
		for i := range 5 {
			v, err := runtime.Await[int](ctx.CallActivity("Step", StepInput{id, i}))
			if err != nil {
				return "", err
			}
			out += strconv.Itoa(v) + ","
		}
		if err := ctx.CreateTimer(200 * time.Millisecond).Await(nil); err != nil {
			return "", err
		}
		fan := []*runtime.Future{
			ctx.CallActivity("Step", StepInput{id, 5}),
			ctx.CallActivity("Step", StepInput{id, 6}),
			ctx.CallActivity("Step", StepInput{id, 7}),
		}
		for _, f := range fan {
			v, err := runtime.Await[int](f)
			if err != nil {
				return "", err
			}
			out += strconv.Itoa(v) + ","
		}
		return out, nil
	})
}

// wantOutput is what Chaos returns for id.
func wantOutput(id string) string {
	out := id + ":"
	for i := range 8 {
		out += strconv.Itoa(i*i) + ","
	}
	return out
}

// stepsPerRun is how many activities one Chaos instance schedules.
const stepsPerRun = 8

// runWorker is one worker process: the runtime on the run's store, each
// activity execution appended to this process's log before it returns.
func runWorker(args []string) error {
	var c config
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.StringVar(&c.store, "store", "", "")
	fs.StringVar(&c.dir, "dir", "", "")
	fs.StringVar(&c.schema, "schema", "", "")
	fs.DurationVar(&c.stepDelay, "step-delay", 0, "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.pgURL = os.Getenv("DUROXIDE_TEST_POSTGRES_URL")
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	log, err := os.OpenFile(filepath.Join(c.dir, fmt.Sprintf("executions-%d.log", os.Getpid())), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	record := func(in StepInput) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(log, "%s %d\n", in.Instance, in.Step)
	}
	reg := runtime.NewRegistry()
	register(reg, c.stepDelay, record)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	p, err := openRetrying(ctx, c, logger)
	if err != nil {
		return err
	}
	defer p.Close()
	rt := runtime.New(p, reg, runtime.Options{Logger: logger, OrchestrationConcurrency: 16, ActivityConcurrency: 16,
		OrchestrationLockTimeout: 5 * time.Second, ActivityLockTimeout: 5 * time.Second,
		RetryBackoff: 50 * time.Millisecond, MaxRetryBackoff: 2 * time.Second})
	if err := rt.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return rt.Shutdown(context.Background())
}

// openRetrying opens the store, retrying while the database restarts.
func openRetrying(ctx context.Context, c config, logger *slog.Logger) (provider.Provider, error) {
	for {
		p, err := c.open(ctx, logger)
		if err == nil {
			return p, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
