package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/duroxide/duroxide-go/provider"
	"github.com/duroxide/duroxide-go/provider/postgres/pgtest"
	"github.com/duroxide/duroxide-go/provider/sqlite"
	"github.com/duroxide/duroxide-go/runtime"
	"github.com/duroxide/duroxide-go/telemetry"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// process is one runtime, with its own connection to the store and its own
// tracer provider, as a separate process would have.
type process struct {
	store   provider.Provider
	rt      *runtime.Runtime
	tracing runtime.Interceptor
}

func startProcess(t *testing.T, name string, open func() provider.Provider, reg *runtime.Registry, spans *tracetest.InMemoryExporter) *process {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.instance.id", name))))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracing := telemetry.Tracing(telemetry.WithTracerProvider(tp))
	store := open()
	rt := runtime.New(store, reg, runtime.Options{Logger: quiet, PollTimeout: 200 * time.Millisecond,
		RetryBackoff: 20 * time.Millisecond, Interceptors: []runtime.Interceptor{tracing}})
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &process{store: store, rt: rt, tracing: tracing}
}

// stop ends the runtime and closes its connection.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.rt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = p.store.Close()
}

// tracedRegistry: a parent that calls an activity failing its first
// attempt (retried), waits for an event, calls a child that calls an
// activity, and continues as new once.
func tracedRegistry(greetCalls *atomic.Int32) *runtime.Registry {
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "greet", func(ctx context.Context, name string) (string, error) {
		if greetCalls.Add(1) == 1 {
			return "", errors.New("first attempt fails")
		}
		return "hello " + name, nil
	})
	runtime.RegisterActivity(reg, "shout", func(ctx context.Context, s string) (string, error) { return s + "!", nil })
	runtime.RegisterOrchestration(reg, "child", func(ctx *runtime.OrchestrationContext, s string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("shout", s))
	})
	runtime.RegisterOrchestration(reg, "parent", func(ctx *runtime.OrchestrationContext, round int) (string, error) {
		if round == 1 {
			return "done", nil
		}
		greeting, err := runtime.Await[string](ctx.CallActivity("greet", "world",
			runtime.WithRetry(runtime.RetryPolicy{MaxAttempts: 2, InitialInterval: 10 * time.Millisecond})))
		if err != nil {
			return "", err
		}
		if err := ctx.WaitForEvent("go").Await(nil); err != nil {
			return "", err
		}
		if _, err := runtime.Await[string](ctx.CallSubOrchestration("child", greeting)); err != nil {
			return "", err
		}
		return "", ctx.ContinueAsNew(round + 1)
	})
	return reg
}

// TestOneTraceAcrossProcesses starts an instance in one process, stops that
// process while the instance waits for an event, and finishes it in
// another that replays its history: every span is in the instance's one
// trace, parented as the package documents, and the replayed part (the
// greet attempts and the turns that ran them) is not traced twice.
func TestOneTraceAcrossProcesses(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "store.db")
		testOneTrace(t, func() provider.Provider {
			s, err := sqlite.Open(t.Context(), path, sqlite.Options{PollInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		schema := pgtest.RandomSchema()
		testOneTrace(t, func() provider.Provider { return pgtest.OpenSchema(t, schema) })
	})
}

func testOneTrace(t *testing.T, open func() provider.Provider) {
	spans := tracetest.NewInMemoryExporter()
	var greetCalls atomic.Int32
	reg := tracedRegistry(&greetCalls)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	first := startProcess(t, "first", open, reg, spans)
	if err := first.rt.Client().Start(ctx, "traced", "parent", 0); err != nil {
		t.Fatal(err)
	}
	waitForSubscription(t, ctx, first.rt.Client(), "traced", "go")
	first.stop(t)
	firstSpans := len(spans.GetSpans())

	second := startProcess(t, "second", open, reg, spans)
	client := runtime.NewClient(second.store, runtime.ClientInterceptors(second.tracing))
	if err := client.RaiseEvent(ctx, "traced", "go", nil); err != nil {
		t.Fatal(err)
	}
	st, err := client.Wait(ctx, "traced")
	if err != nil || st.Status != runtime.StatusCompleted {
		t.Fatalf("instance: %+v, %v", st, err)
	}
	// A turn's span ends after its commit, which Wait may see first:
	// stopping the runtime waits for its turns.
	second.stop(t)
	checkTrace(t, spans.GetSpans(), firstSpans)
}

func waitForSubscription(t *testing.T, ctx context.Context, c *runtime.Client, instance, event string) {
	t.Helper()
	for {
		history, err := c.History(ctx, instance)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(history, func(e provider.Event) bool {
			return e.Kind == provider.EventExternalSubscribed && e.Name == event
		}) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never waited for %q: %v", instance, event, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func checkTrace(t *testing.T, all tracetest.SpanStubs, firstSpans int) {
	t.Helper()
	byName := map[string][]tracetest.SpanStub{}
	byID := map[trace.SpanID]tracetest.SpanStub{}
	var traceID trace.TraceID
	for _, s := range all {
		t.Logf("%-16s %s parent=%s process=%v replayed=%v", s.Name, s.SpanContext.SpanID(), s.Parent.SpanID(),
			attr(s.Resource.Attributes(), "service.instance.id"), attr(s.Attributes, "duroxide.replayed"))
		if s.Name == "raise go" {
			continue // the caller's own trace
		}
		byName[s.Name] = append(byName[s.Name], s)
		byID[s.SpanContext.SpanID()] = s
		if !traceID.IsValid() {
			traceID = s.SpanContext.TraceID()
		}
		if s.SpanContext.TraceID() != traceID {
			t.Errorf("span %q is in trace %s, not the instance's %s", s.Name, s.SpanContext.TraceID(), traceID)
		}
	}
	parentName := func(s tracetest.SpanStub) string { return byID[s.Parent.SpanID()].Name }
	if n := len(byName["start parent"]); n != 1 {
		t.Fatalf("%d start spans, want 1", n)
	}
	if n := len(byName["activity greet"]); n != 2 {
		t.Errorf("%d greet spans, want 2 (the failed attempt and the retry, none replayed)", n)
	}
	for _, name := range []string{"activity greet", "activity shout"} {
		for _, s := range byName[name] {
			if want := "turn " + map[string]string{"activity greet": "parent", "activity shout": "child"}[name]; parentName(s) != want {
				t.Errorf("%s: parent %q, want %q", name, parentName(s), want)
			}
		}
	}
	if len(byName["activity shout"]) != 1 || len(byName["turn child"]) == 0 {
		t.Errorf("child: %d turn spans, %d shout spans; want the child traced", len(byName["turn child"]), len(byName["activity shout"]))
	}
	for _, s := range byName["turn child"] {
		if parentName(s) != "turn parent" {
			t.Errorf("turn child: parent %q, want the parent's turn", parentName(s))
		}
	}
	replayedAfterRestart, continued := false, 0
	for i, s := range byName["turn parent"] {
		if parentName(s) != "start parent" {
			t.Errorf("turn parent #%d: parent %q, want the start", i, parentName(s))
		}
		if attr(s.Resource.Attributes(), "service.instance.id") == "second" && attr(s.Attributes, "duroxide.replayed").(int64) > 0 {
			replayedAfterRestart = true
		}
		if len(s.Links) == 1 && byID[s.Links[0].SpanContext.SpanID()].Name == "turn parent" {
			continued++
		}
	}
	if !replayedAfterRestart {
		t.Error("no turn of the second process replayed history")
	}
	if continued != 1 {
		t.Errorf("%d turns linked to the turn that continued them as new, want 1", continued)
	}
	if firstSpans == 0 || firstSpans == len(all) {
		t.Errorf("%d of %d spans from the first process; want both processes traced", firstSpans, len(all))
	}
}

func attr(kvs []attribute.KeyValue, key string) any {
	for _, kv := range kvs {
		if string(kv.Key) == key {
			return kv.Value.AsInterface()
		}
	}
	return nil
}

// An instance started without trace context is one trace whose ID derives
// from the instance ID, sampled as a ratio sampler would sample that trace
// ID: all of its spans or none. The ratio is OTEL_TRACES_SAMPLER's (as the
// SDK reads it) unless WithDerivedSampling sets one.
func TestUntracedStartsSampledByInstance(t *testing.T) {
	for _, tc := range []struct {
		name         string
		sampler, arg string
		opts         []telemetry.TracingOption
		ratio        float64
	}{
		{name: "no sampler set: all", ratio: 1},
		{name: "env ratio", sampler: "parentbased_traceidratio", arg: "0.5", ratio: 0.5},
		{name: "env always_off", sampler: " ParentBased_Always_Off", ratio: 0},
		{name: "env ratio out of range", sampler: "traceidratio", arg: "2", ratio: 1},
		{name: "option over env", sampler: "parentbased_traceidratio", arg: "0.5",
			opts: []telemetry.TracingOption{telemetry.WithDerivedSampling(0.25)}, ratio: 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_SAMPLER", tc.sampler)
			t.Setenv("OTEL_TRACES_SAMPLER_ARG", tc.arg)
			spans := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			const n = 40
			runUntraced(t, telemetry.Tracing(append([]telemetry.TracingOption{telemetry.WithTracerProvider(tp)}, tc.opts...)...), n)
			sampler := sdktrace.TraceIDRatioBased(tc.ratio)
			byTrace := map[trace.TraceID][]string{}
			for _, s := range spans.GetSpans() {
				byTrace[s.SpanContext.TraceID()] = append(byTrace[s.SpanContext.TraceID()], s.Name)
			}
			for tid, names := range byTrace {
				if len(names) != 3 {
					t.Errorf("trace %s has spans %v, want an instance's three (two turns, one attempt)", tid, names)
				}
				if sampler.ShouldSample(sdktrace.SamplingParameters{TraceID: tid}).Decision != sdktrace.RecordAndSample {
					t.Errorf("trace %s was sampled; ratio %v leaves it out", tid, tc.ratio)
				}
			}
			switch got := len(byTrace); {
			case tc.ratio == 1 && got != n:
				t.Errorf("%d of %d instances traced, want all", got, n)
			case tc.ratio == 0 && got != 0:
				t.Errorf("%d of %d instances traced, want none", got, n)
			case tc.ratio > 0 && tc.ratio < 1 && (got == 0 || got == n):
				t.Errorf("%d of %d instances traced at ratio %v, want some", got, n, tc.ratio)
			}
		})
	}
}

// runUntraced runs n instances, one at a time, of an orchestration that
// calls one activity, started by a client without the interceptor, and
// stops the runtime.
func runUntraced(t *testing.T, tracing runtime.Interceptor, n int) {
	t.Helper()
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "untraced.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	reg := runtime.NewRegistry()
	runtime.RegisterActivity(reg, "greet", func(_ context.Context, s string) (string, error) { return "hello " + s, nil })
	runtime.RegisterOrchestration(reg, "hello", func(ctx *runtime.OrchestrationContext, s string) (string, error) {
		return runtime.Await[string](ctx.CallActivity("greet", s))
	})
	rt := runtime.New(store, reg, runtime.Options{Logger: quiet, Interceptors: []runtime.Interceptor{tracing}})
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A turn's span ends after its commit, which Wait may see first:
	// Shutdown waits for the turns, so every span has ended on return.
	defer func() {
		if err := rt.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	c := runtime.NewClient(store)
	for i := range n {
		id := fmt.Sprintf("untraced-%d", i)
		if err := c.Start(t.Context(), id, "hello", "x"); err != nil {
			t.Fatal(err)
		}
		if st, err := c.Wait(t.Context(), id); err != nil || st.Status != runtime.StatusCompleted {
			t.Fatalf("%s: %+v %v", id, st, err)
		}
	}
}
