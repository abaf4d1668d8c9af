package controllers_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	toolswatch "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/duroxide/duroxide-go/api/v1alpha1"
	"github.com/duroxide/duroxide-go/provider"
	dxruntime "github.com/duroxide/duroxide-go/runtime"
)

const manyOrchestrations = 1000

// 1,000 Orchestrations applied at once all reach Completed with their
// outputs. The test reports how long that took and the delay from each
// instance's completion in the store to its CR status showing it, as seen
// by a watch (figures, not assertions: speed belongs to benchmarks).
func TestThousandOrchestrations(t *testing.T) {
	p := newPool(t, func(o *dxruntime.Options) { o.OrchestrationConcurrency, o.ActivityConcurrency = 16, 32 })
	seen := watchCompletions(t, p.ns)
	began := time.Now()
	createMany(t, p, manyOrchestrations)
	created := time.Since(began)
	observed := waitForCompletions(t, seen, manyOrchestrations, 10*time.Minute)
	total := time.Since(began)

	delays := make([]time.Duration, 0, manyOrchestrations)
	for name, at := range observed {
		o := &v1.Orchestration{}
		if err := k8s.Get(t.Context(), client.ObjectKey{Namespace: p.ns, Name: name}, o); err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		if want := fmt.Sprintf(`"Hello, %s!"`, name); o.Status.Output != want {
			t.Fatalf("%s: output %s, want %s", name, o.Status.Output, want)
		}
		exec, err := p.store.GetExecutionInfo(t.Context(), provider.ExecutionRequest{Instance: o.Status.InstanceID, ExecutionID: 1})
		if err != nil || exec.CompletedAt.IsZero() {
			t.Fatalf("%s: execution info %+v, %v", name, exec, err)
		}
		delays = append(delays, at.Sub(exec.CompletedAt))
	}
	slices.Sort(delays)
	pct := func(q float64) time.Duration { return delays[int(q*float64(len(delays)-1))] }
	t.Logf("RESULT scenario=operator-crs n=%d create_s=%.1f all_completed_s=%.1f crs_per_s=%.1f "+
		"status_delay_p50_ms=%d status_delay_p90_ms=%d status_delay_p99_ms=%d status_delay_max_ms=%d",
		manyOrchestrations, created.Seconds(), total.Seconds(), float64(manyOrchestrations)/total.Seconds(),
		pct(0.50).Milliseconds(), pct(0.90).Milliseconds(), pct(0.99).Milliseconds(), delays[len(delays)-1].Milliseconds())
}

// watchCompletions records when each Orchestration of ns is first seen
// Completed. A RetryWatcher resumes from the last resource version when the
// API server drops the watch (it does, under load, with slow clients).
func watchCompletions(t *testing.T, ns string) <-chan completion {
	wc, err := client.NewWithWatch(restCfg, client.Options{Scheme: testScheme()})
	if err != nil {
		t.Fatalf("watch client: %v", err)
	}
	var initial v1.OrchestrationList
	if err := wc.List(t.Context(), &initial, client.InNamespace(ns)); err != nil {
		t.Fatalf("list: %v", err)
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		return wc.Watch(ctx, &v1.OrchestrationList{}, client.InNamespace(ns), &client.ListOptions{Raw: &opts})
	}}
	w, err := toolswatch.NewRetryWatcherWithContext(t.Context(), initial.ResourceVersion, lw)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	t.Cleanup(w.Stop)
	out := make(chan completion, manyOrchestrations)
	go func() {
		defer close(out)
		done := map[string]bool{}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				t.Logf("watch error: %+v", ev.Object)
				return
			}
			o, ok := ev.Object.(*v1.Orchestration)
			if !ok || ev.Type == watch.Deleted || done[o.Name] || o.Status.Phase != v1.PhaseCompleted {
				continue
			}
			done[o.Name] = true
			out <- completion{o.Name, time.Now()}
		}
	}()
	return out
}

// completion is an Orchestration seen Completed, and when the watch saw it
// (the reader may take it later).
type completion struct {
	name string
	at   time.Time
}

func waitForCompletions(t *testing.T, seen <-chan completion, n int, limit time.Duration) map[string]time.Time {
	t.Helper()
	observed := make(map[string]time.Time, n)
	timeout := time.After(limit)
	progress := time.NewTicker(15 * time.Second)
	defer progress.Stop()
	for len(observed) < n {
		select {
		case c, ok := <-seen:
			if !ok {
				t.Fatalf("watch ended after %d of %d completions", len(observed), n)
			}
			observed[c.name] = c.at
		case <-progress.C:
			t.Logf("%d of %d Orchestrations Completed", len(observed), n)
		case <-timeout:
			t.Fatalf("only %d of %d Orchestrations Completed within %v", len(observed), n, limit)
		}
	}
	return observed
}

// createMany applies n Hello Orchestrations from 16 goroutines.
func createMany(t *testing.T, p *testPool, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	names := make(chan string, n)
	for i := range n {
		names <- fmt.Sprintf("n-%04d", i)
	}
	close(names)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			for name := range names {
				if err := k8s.Create(ctx, p.orchestration(name, "Hello", name)); err != nil {
					errs <- fmt.Errorf("create %s: %w", name, err)
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}
