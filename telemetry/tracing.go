package telemetry

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/duroxide/duroxide-go/runtime"
)

// scope is the instrumentation scope of the spans.
const scope = "github.com/duroxide/duroxide-go/telemetry"

// TracingOption configures Tracing.
type TracingOption func(*tracing)

// WithTracerProvider sets where spans go (default: otel.GetTracerProvider
// when Tracing is called).
func WithTracerProvider(tp trace.TracerProvider) TracingOption {
	return func(t *tracing) { t.tracer = tp.Tracer(scope) }
}

// WithPropagator sets how trace context is written into headers (default:
// W3C trace context, whatever the global propagator is).
func WithPropagator(p propagation.TextMapPropagator) TracingOption {
	return func(t *tracing) { t.prop = p }
}

// WithDerivedSampling sets the share (0 to 1) of the instances started
// without trace context whose spans are sampled. Their trace ID derives
// from the instance ID, and so does the decision, as TraceIDRatioBased
// decides from a trace ID: an instance's spans are kept or dropped
// together. Default: the ratio OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG give the OpenTelemetry SDK (traceidratio,
// parentbased_traceidratio: the argument; always_off,
// parentbased_always_off: 0), else 1.
func WithDerivedSampling(ratio float64) TracingOption {
	return func(t *tracing) { t.derivedBound = ratioBound(ratio) }
}

// Tracing returns an interceptor that traces client calls, turns and
// activity attempts, and propagates the trace context through the headers
// of the work each turn schedules.
func Tracing(opts ...TracingOption) runtime.Interceptor {
	t := &tracing{tracer: otel.GetTracerProvider().Tracer(scope), prop: propagation.TraceContext{},
		producer:     []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)},
		consumer:     []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)},
		derivedBound: ratioBound(ratioFromEnv())}
	for _, o := range opts {
		o(t)
	}
	return t
}

// ratioFromEnv is the sampling ratio the standard variables give the SDK's
// default sampler: 1 when they set none, or an invalid one (as the SDK
// falls back to sampling everything).
func ratioFromEnv() float64 {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER"))) {
	case "always_off", "parentbased_always_off":
		return 0
	case "traceidratio", "parentbased_traceidratio":
		arg := strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER_ARG"))
		if r, err := strconv.ParseFloat(arg, 64); err == nil && r >= 0 && r <= 1 {
			return r
		}
	}
	return 1
}

// ratioBound is what a trace ID's last 63 bits must stay under to be
// sampled at ratio (TraceIDRatioBased's rule); 1 and more sample all.
func ratioBound(ratio float64) uint64 {
	switch {
	case ratio >= 1:
		return 1 << 63
	case ratio <= 0:
		return 0
	}
	return uint64(ratio * (1 << 63))
}

// tracing keeps what every span shares, so that starting one allocates
// little; an instance a sampler leaves out costs a non-recording span each.
// Attributes and links are added only to recording spans, all at once.
type tracing struct {
	tracer             trace.Tracer
	prop               propagation.TextMapPropagator
	producer, consumer []trace.SpanStartOption
	names              sync.Map // prefix+name -> span name
	// derivedBound samples the instances without trace context (ratioBound).
	derivedBound uint64
}

// spanName is prefix+" "+name, built once per name: the names of turns and
// activities are those registered, a set the code bounds (an event's name,
// which a client chooses, is not kept).
func (t *tracing) spanName(prefix, name string) string {
	type key struct{ prefix, name string }
	if n, ok := t.names.Load(key{prefix, name}); ok {
		return n.(string)
	}
	n := prefix + " " + name
	t.names.Store(key{prefix, name}, n)
	return n
}

// Attribute keys of the spans.
const (
	AttrInstance   = attribute.Key("duroxide.instance")
	AttrExecution  = attribute.Key("duroxide.execution")
	AttrName       = attribute.Key("duroxide.name")
	AttrVersion    = attribute.Key("duroxide.version")
	AttrReplayed   = attribute.Key("duroxide.replayed")
	AttrAttempt    = attribute.Key("duroxide.attempt")
	AttrStatus     = attribute.Key("duroxide.status")
	AttrActivityID = attribute.Key("duroxide.activity_id")
	AttrLocal      = attribute.Key("duroxide.local")
	AttrDeclined   = attribute.Key("duroxide.declined")
)

func (t *tracing) InterceptClient(ctx context.Context, call *runtime.ClientCall, next func(context.Context) error) error {
	ctx, span := t.tracer.Start(ctx, string(call.Op)+" "+call.Name, t.producer...)
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(AttrInstance.String(call.Instance), AttrName.String(call.Name))
	}
	if call.Op == runtime.ClientStart {
		call.Headers = t.inject(ctx, call.Headers)
	}
	return ended(span, next(ctx))
}

func (t *tracing) InterceptTurn(ctx context.Context, turn *runtime.TurnInfo, next func(context.Context) error) error {
	ctx, span := t.tracer.Start(t.parent(ctx, turn.Headers, turn.Instance), t.spanName("turn", turn.Orchestration), t.consumer...)
	defer span.End()
	err := next(ctx)
	if !span.IsRecording() {
		return err
	}
	if turn.Replayed == 0 {
		if prev := t.previous(turn.Headers); prev.IsValid() {
			span.AddLink(trace.Link{SpanContext: prev, Attributes: []attribute.KeyValue{attribute.String("duroxide.link", "continued from")}})
		}
	}
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs, AttrInstance.String(turn.Instance), AttrExecution.Int64(turn.ExecutionID),
		AttrName.String(turn.Orchestration), AttrReplayed.Int(turn.Replayed))
	if turn.Version != "" {
		attrs = append(attrs, AttrVersion.String(turn.Version))
	}
	if turn.Attempt > 1 {
		attrs = append(attrs, AttrAttempt.Int(turn.Attempt))
	}
	if errors.Is(err, runtime.ErrTurnDeclined) {
		span.SetAttributes(append(attrs, AttrDeclined.Bool(true))...)
		return err
	}
	span.SetAttributes(append(attrs, AttrStatus.String(string(turn.Status)))...)
	return ended(span, err)
}

func (t *tracing) InterceptActivity(ctx context.Context, call *runtime.ActivityCall, next func(context.Context) error) error {
	ctx, span := t.tracer.Start(t.parent(ctx, call.Headers, call.Instance), t.spanName("activity", call.Name), t.consumer...)
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(AttrInstance.String(call.Instance), AttrExecution.Int64(call.ExecutionID),
			AttrName.String(call.Name), AttrActivityID.Int64(call.ActivityID), AttrAttempt.Int(call.Attempt),
			AttrLocal.Bool(call.Local))
	}
	return ended(span, next(ctx))
}

// InterceptSchedule records the turn's span context with the work. The
// execution that follows a continue-as-new keeps its predecessor's parent
// (the instance's start), so an eternal orchestration's turns stay one
// level deep, and links its first turn to the turn that continued it.
func (t *tracing) InterceptSchedule(ctx context.Context, s *runtime.Scheduled) {
	if s.Kind == runtime.ScheduleContinueAsNew {
		s.Headers = t.withPrevious(ctx, s.Headers)
		return
	}
	for k := range s.Headers {
		if strings.HasPrefix(k, previousPrefix) {
			delete(s.Headers, k)
		}
	}
	s.Headers = t.inject(ctx, s.Headers)
}

// inject writes ctx's span context into headers (a new map when nil).
func (t *tracing) inject(ctx context.Context, headers map[string]string) map[string]string {
	if headers == nil {
		headers = map[string]string{}
	}
	t.prop.Inject(ctx, propagation.MapCarrier(headers))
	return headers
}

// previousPrefix marks the headers that carry, into the execution after a
// continue-as-new, the span context of the turn that continued.
const previousPrefix = "duroxide-previous-"

// withPrevious adds ctx's span context to headers under previousPrefix.
func (t *tracing) withPrevious(ctx context.Context, headers map[string]string) map[string]string {
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	if headers == nil {
		headers = map[string]string{}
	}
	for k, v := range carrier {
		headers[previousPrefix+k] = v
	}
	return headers
}

// previous is the span context withPrevious recorded (invalid when none).
func (t *tracing) previous(headers map[string]string) trace.SpanContext {
	carrier := propagation.MapCarrier{}
	for k, v := range headers {
		if rest, ok := strings.CutPrefix(k, previousPrefix); ok {
			carrier[rest] = v
		}
	}
	if len(carrier) == 0 {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(t.prop.Extract(context.Background(), carrier))
}

// parent is ctx with the span context the headers carry as the parent; an
// instance whose headers carry none gets one derived from its ID, so its
// spans share a trace.
func (t *tracing) parent(ctx context.Context, headers map[string]string, instance string) context.Context {
	if len(headers) > 0 {
		if pctx := t.prop.Extract(ctx, propagation.MapCarrier(headers)); trace.SpanContextFromContext(pctx).IsValid() {
			return pctx
		}
	}
	return trace.ContextWithRemoteSpanContext(ctx, t.instanceSpanContext(instance))
}

// instanceSpanContext is a span context derived from the instance ID alone,
// sampled when its trace ID falls under derivedBound.
func (t *tracing) instanceSpanContext(instance string) trace.SpanContext {
	sum := sha256.Sum256([]byte("duroxide instance " + instance))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	var flags trace.TraceFlags
	if binary.BigEndian.Uint64(tid[8:16])>>1 < t.derivedBound {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true})
}

// ended marks span failed with err (when not nil) and returns err.
func ended(span trace.Span, err error) error {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}
