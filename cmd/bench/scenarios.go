package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/runtime"
)

type scenario func(ctx context.Context, e *env) (result, error)

// The -local scenarios run the same orchestrations with their activities
// inside the turn (runtime.WithLocal).
var scenarios = map[string]scenario{
	"hello":         atOnce("Hello", "bench", func(c config) int { return c.hello }, 1),
	"hello-local":   atOnce("HelloLocal", "bench", func(c config) int { return c.hello }, 1),
	"chain":         atOnce("Chain10", 0, func(c config) int { return c.chain }, 10),
	"chain-local":   atOnce("Chain10Local", 0, func(c config) int { return c.chain }, 10),
	"timer":         timerScenario,
	"fanout":        fanoutScenario("Fanout5"),
	"fanout-local":  fanoutScenario("Fanout5Local"),
	"latency":       latencyScenario("Hello"),
	"latency-local": latencyScenario("HelloLocal"),
}

func registerBenchCode(reg *runtime.Registry) {
	runtime.RegisterActivity(reg, "Greet", func(_ context.Context, name string) (string, error) { return "Hello, " + name, nil })
	runtime.RegisterActivity(reg, "Step", func(_ context.Context, n int) (int, error) { return n + 1, nil })
	runtime.RegisterActivity(reg, "Sleep10", func(ctx context.Context, i int) (int, error) {
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
		}
		return i, nil
	})
	for suffix, opts := range map[string][]runtime.ActivityOption{"": nil, "Local": {runtime.WithLocal()}} {
		runtime.RegisterOrchestration(reg, "Hello"+suffix, func(ctx *runtime.OrchestrationContext, name string) (string, error) {
			return runtime.Await[string](ctx.CallActivity("Greet", name, opts...))
		})
		runtime.RegisterOrchestration(reg, "Chain10"+suffix, func(ctx *runtime.OrchestrationContext, n int) (int, error) {
			for range 10 {
				var err error
				if n, err = runtime.Await[int](ctx.CallActivity("Step", n, opts...)); err != nil {
					return 0, err
				}
			}
			return n, nil
		})
		runtime.RegisterOrchestration(reg, "Fanout5"+suffix, func(ctx *runtime.OrchestrationContext, _ struct{}) (int, error) {
			fs := make([]*runtime.Future, 5)
			for i := range fs {
				fs[i] = ctx.CallActivity("Sleep10", i, opts...)
			}
			return 5, ctx.WhenAll(fs...)
		})
	}
	runtime.RegisterOrchestration(reg, "Timer1s", func(ctx *runtime.OrchestrationContext, _ struct{}) (string, error) {
		return "rang", ctx.CreateTimer(time.Second).Await(nil)
	})
}

// progress prints a line on stderr every second until stop is closed.
func progress(label string, total int, done func() int) (stop func()) {
	quit := make(chan struct{})
	began := time.Now()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintf(os.Stderr, "bench: %s %d/%d done after %.0fs\n", label, done(), total, time.Since(began).Seconds())
			}
		}
	}()
	return func() { close(quit) }
}

// startAll starts n instances of orchestration with `starters` concurrent
// starters and returns the time each start was issued.
func startAll(ctx context.Context, e *env, prefix, orchestration string, n int, input any) ([]time.Time, error) {
	started := make([]time.Time, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, e.cfg.starters)
	for range e.cfg.starters {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				started[i] = time.Now()
				if err := e.client.Start(ctx, fmt.Sprintf("%s-%d", prefix, i), orchestration, input); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	fmt.Fprintf(os.Stderr, "bench: started %d instances in %.2fs\n", n, time.Since(started[0]).Seconds())
	return started, <-errs
}

// awaitAll waits for every instance and returns each one's latency and the
// moment the last one finished.
func awaitAll(ctx context.Context, e *env, label, prefix string, started []time.Time) (samples, time.Time, error) {
	stop := progress(label, len(started), func() int { d, _ := e.tracker.count(); return d })
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	lat := make(samples, len(started))
	var last time.Time
	for i := range started {
		at, err := e.tracker.await(ctx, fmt.Sprintf("%s-%d", prefix, i))
		if err != nil {
			return nil, last, fmt.Errorf("waiting for %s-%d: %w", prefix, i, err)
		}
		lat[i] = at.Sub(started[i])
		if at.After(last) {
			last = at
		}
	}
	if err := e.failures(ctx); err != nil {
		return nil, last, err
	}
	return lat, last, nil
}

func atOnce(orchestration string, input any, size func(config) int, activitiesEach int) scenario {
	return func(ctx context.Context, e *env) (result, error) {
		n := size(e.cfg)
		started, err := startAll(ctx, e, "i", orchestration, n, input)
		if err != nil {
			return result{}, err
		}
		lat, last, err := awaitAll(ctx, e, orchestration, "i", started)
		if err != nil {
			return result{}, err
		}
		return result{n: n, activities: n * activitiesEach, wall: last.Sub(started[0]), latency: lat}, nil
	}
}

// timerScenario reports two lateness measures. Its latency (p99_ms) is
// completion as the client sees it minus the start minus the 1s timer, which
// includes the queueing before each instance's first turn: the figure peers
// are compared on. due_p99_ms is completion (store clock) minus the moment
// the timer was due, the dispatcher's own lateness.
func timerScenario(ctx context.Context, e *env) (result, error) {
	n := e.cfg.timer
	started, err := startAll(ctx, e, "t", "Timer1s", n, struct{}{})
	if err != nil {
		return result{}, err
	}
	lat, last, err := awaitAll(ctx, e, "timer", "t", started)
	if err != nil {
		return result{}, err
	}
	for i := range lat {
		lat[i] -= time.Second
	}
	late := make(samples, 0, n)
	for i := range n {
		id := fmt.Sprintf("t-%d", i)
		history, err := e.store.ReadHistory(ctx, provider.ExecutionRequest{Instance: id})
		if err != nil {
			return result{}, err
		}
		info, err := e.store.GetExecutionInfo(ctx, provider.ExecutionRequest{Instance: id, ExecutionID: 1})
		if err != nil {
			return result{}, err
		}
		due, err := timerDue(history)
		if err != nil {
			return result{}, fmt.Errorf("%s: %w", id, err)
		}
		late = append(late, info.CompletedAt.Sub(due))
	}
	extra := fmt.Sprintf(" due_p50_ms=%.2f due_p99_ms=%.2f", ms(late.quantile(0.5)), ms(late.quantile(0.99)))
	return result{n: n, wall: last.Sub(started[0]), latency: lat, extra: extra}, nil
}

func timerDue(history []provider.Event) (time.Time, error) {
	for _, ev := range history {
		if ev.Kind == provider.EventTimerCreated {
			return time.UnixMilli(ev.FireAt), nil
		}
	}
	return time.Time{}, errors.New("no TimerCreated event")
}

// fanoutScenario keeps e.cfg.fanoutInFlight instances of orchestration
// running for the configured duration, each fanning out to five 10ms activities.
func fanoutScenario(orchestration string) scenario {
	return func(ctx context.Context, e *env) (result, error) { return fanout(ctx, e, orchestration) }
}

func fanout(ctx context.Context, e *env, orchestration string) (result, error) {
	var mu sync.Mutex
	var lat samples
	var seq atomic.Int64
	began := time.Now()
	deadline := began.Add(e.cfg.fanoutFor)
	stop := progress("fanout", 0, func() int { mu.Lock(); defer mu.Unlock(); return len(lat) })
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, e.cfg.fanoutInFlight)
	for range e.cfg.fanoutInFlight {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				id := fmt.Sprintf("f-%d", seq.Add(1))
				start := time.Now()
				if err := e.client.Start(ctx, id, orchestration, struct{}{}); err != nil {
					errs <- err
					return
				}
				at, err := e.tracker.await(ctx, id)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				lat = append(lat, at.Sub(start))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return result{}, err
	}
	if err := e.failures(ctx); err != nil {
		return result{}, err
	}
	return result{n: len(lat), activities: 5 * len(lat), wall: time.Since(began), latency: lat}, nil
}

// latencyScenario runs instances of a hello orchestration one at a time.
func latencyScenario(orchestration string) scenario {
	return func(ctx context.Context, e *env) (result, error) { return latency(ctx, e, orchestration) }
}

func latency(ctx context.Context, e *env, orchestration string) (result, error) {
	n := e.cfg.latency
	lat := make(samples, 0, n)
	stop := progress("latency", n, func() int { d, _ := e.tracker.count(); return d })
	defer stop()
	began := time.Now()
	for i := range n {
		id := fmt.Sprintf("l-%d", i)
		start := time.Now()
		if err := e.client.Start(ctx, id, orchestration, "you"); err != nil {
			return result{}, err
		}
		at, err := e.tracker.await(ctx, id)
		if err != nil {
			return result{}, err
		}
		lat = append(lat, at.Sub(start))
	}
	return result{n: n, activities: n, wall: time.Since(began), latency: lat}, nil
}

// failures reports instances that did not complete, with one example's cause.
func (e *env) failures(ctx context.Context) error {
	_, failed := e.tracker.count()
	if failed == 0 {
		return nil
	}
	instance := e.tracker.aFailure()
	st, err := e.client.Status(ctx, instance)
	if err != nil {
		return fmt.Errorf("%d instances did not complete successfully (%s: %v)", failed, instance, err)
	}
	return fmt.Errorf("%d instances did not complete successfully, e.g. %s: %s %v", failed, instance, st.Status, st.Failure)
}
