package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

// fleet is the run's worker processes.
type fleet struct {
	cfg   config
	mu    sync.Mutex
	procs []*exec.Cmd
	kills int
	logs  *os.File
}

func (f *fleet) spawn() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, f.cfg.workerArgs()...)
	cmd.Env = os.Environ()
	cmd.Stdout, cmd.Stderr = f.logs, f.logs
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	f.mu.Lock()
	f.procs = append(f.procs, cmd)
	f.mu.Unlock()
	return nil
}

// killOne SIGKILLs a random worker and starts its replacement.
func (f *fleet) killOne() error {
	f.mu.Lock()
	i := rand.IntN(len(f.procs))
	victim := f.procs[i]
	f.procs = append(f.procs[:i], f.procs[i+1:]...)
	f.kills++
	f.mu.Unlock()
	_ = victim.Process.Signal(syscall.SIGKILL)
	return f.spawn()
}

func (f *fleet) stopAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		_ = p.Process.Signal(syscall.SIGKILL)
	}
	f.procs = nil
}

// run drives one chaos run and reports it; ok is false when anything was
// lost, wrong or recorded twice.
func run(cfg config) (bool, error) {
	defer os.RemoveAll(cfg.dir)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.limit)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := cfg.open(ctx, quiet)
	if err != nil {
		return false, fmt.Errorf("open store: %w", err)
	}
	defer store.Close()
	logs, err := os.Create(cfg.dir + "/workers.log")
	if err != nil {
		return false, err
	}
	defer logs.Close()
	f := &fleet{cfg: cfg, logs: logs}
	defer f.stopAll()
	for range cfg.workers {
		if err := f.spawn(); err != nil {
			return false, err
		}
	}
	client := runtime.NewClient(store)
	ids := make([]string, cfg.orchestrations)
	for i := range ids {
		ids[i] = fmt.Sprintf("chaos-%05d", i)
	}
	began := time.Now()
	fmt.Fprintf(os.Stderr, "chaos: %d orchestrations started over %v on %d %s workers; killing one every 1-3 s\n",
		len(ids), cfg.duration, cfg.workers, cfg.store)
	started := make(chan error, 1)
	go func() { started <- startSpread(ctx, client, ids, cfg.duration) }()
	restarts, lastFault := disrupt(ctx, f, cfg)
	if err := <-started; err != nil {
		return false, fmt.Errorf("start orchestrations: %w", err)
	}
	drainStart := lastFault
	finished := waitAllFinished(ctx, store, len(ids))
	drain := time.Since(drainStart)
	f.stopAll()
	rep, err := check(context.Background(), cfg, client, store, ids)
	if err != nil {
		return false, err
	}
	rep.kills, rep.restarts, rep.drain, rep.total = f.kills, restarts, drain, time.Since(began)
	rep.print(cfg, finished)
	return rep.ok(), nil
}

// disrupt kills a worker every 1–3 s while the starts go on, and
// crash-restarts PostgreSQL once, at the first fault. It returns the
// restarts and when the last fault happened.
func disrupt(ctx context.Context, f *fleet, cfg config) (int, time.Time) {
	restarts, last := 0, time.Now()
	end := time.Now().Add(cfg.duration)
	for tick := 1; ctx.Err() == nil; tick++ {
		time.Sleep(time.Second + time.Duration(rand.IntN(2000))*time.Millisecond)
		if time.Now().After(end) {
			return restarts, last
		}
		if restarts == 0 && cfg.pgDir != "" && tick == 1 {
			fmt.Fprintln(os.Stderr, "chaos: PostgreSQL crash-restart (pg_ctl stop -m immediate)")
			if out, err := exec.Command("hack/test-postgres.sh", "crash-restart", cfg.pgDir).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "chaos: crash-restart failed: %v\n%s", err, out)
			}
			restarts++
		}
		if err := f.killOne(); err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
		}
		last = time.Now()
	}
	return restarts, last
}

// waitAllFinished waits until the store counts every instance finished: one
// count query per poll, not a status read per instance (the run has the
// store to itself).
func waitAllFinished(ctx context.Context, admin provider.Admin, n int) bool {
	for ctx.Err() == nil {
		m, err := admin.GetSystemMetrics(ctx)
		if err == nil && m.Completed+m.Failed+m.Terminated >= int64(n) {
			return true
		}
		time.Sleep(250 * time.Millisecond)
	}
	return false
}

// startSpread starts the instances evenly over d, so faults hit work in flight.
func startSpread(ctx context.Context, client *runtime.Client, ids []string, d time.Duration) error {
	gap := d / time.Duration(len(ids))
	next := time.Now()
	for _, id := range ids {
		time.Sleep(time.Until(next))
		next = next.Add(gap)
		if err := startRetrying(ctx, client, id); err != nil {
			return err
		}
	}
	return nil
}

// startRetrying starts id until the store answers. The start names its
// owner, so a retry of a start whose reply a fault lost is taken for that
// start rather than refused as a taken ID.
func startRetrying(ctx context.Context, client *runtime.Client, id string) error {
	for {
		err := client.Start(ctx, id, "Chaos", id, runtime.StartOwner("chaos run, start of "+id))
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
