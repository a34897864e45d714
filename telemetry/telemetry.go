// Package telemetry traces Weft runs with OpenTelemetry: a span for each
// run, each super-step, each task, each model call and each tool call,
// with the attributes of OpenTelemetry's GenAI semantic conventions
// (gen_ai.operation.name, gen_ai.request.model, gen_ai.usage.*,
// gen_ai.tool.name, …) and Weft's own (weft.thread_id, weft.checkpoint_id,
// weft.task_id, …), the run's interrupts as events of its span.
//
// A Tracer attaches itself to graphs with Instrument (an engine.RunHook):
// every run of the returned graph is traced, whoever starts it. The run
// only records its lifecycle and call events (engine.ModeLifecycle and
// engine.ModeCalls, a lock and an append each); the spans are built from
// them on a goroutine of the Tracer's once the run returns, with the
// events' own times, and exported in batches. So tracing adds little to a
// run, and a run's spans reach the collector when it ends.
//
// A run that continues a thread links its span to the span of the run that
// wrote the checkpoint it starts from: every run stores its span's context
// in the metadata of its checkpoints, under MetadataKey, as a W3C
// traceparent. The checkpoint is where the thread's history lives, in the
// same store and transaction as the state, so the link survives the hours
// between an interrupt and its answer, a restart, and a worker in another
// process resuming the thread; nothing else has to be stored or cleaned up.
// The link goes to the run that wrote that checkpoint: a resume that stops
// again inside the same step (a node that asks twice) writes no checkpoint
// of its own, so the run after it links to the run before it.
//
// Prompt and completion contents, tool arguments and results, and
// interrupt payloads are recorded only with WithContent (or
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true under FromEnv).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// MetadataKey is the checkpoint metadata key (Metadata.Extra) under which a
// traced run stores its span's context as a W3C traceparent
// ("00-<trace id>-<span id>-<flags>"), read by the next run of the thread
// to link to it.
const MetadataKey = "otel_traceparent"

// ContentEnv is the environment variable that makes FromEnv record
// contents ("true"), as OpenTelemetry's GenAI instrumentations read it.
const ContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// ScopeName is the instrumentation scope of Weft's spans.
const ScopeName = "github.com/weftstudio/weft/telemetry"

// queueSize bounds the finished runs waiting for their spans to be built;
// past it runs are dropped and counted, as the SDK drops spans, so that a
// collector that cannot keep up never slows the runs.
const queueSize = 1024

// Tracer builds and exports the spans of the runs of the graphs it
// instruments. Its methods are safe for concurrent use. Make one with New
// or FromEnv and call Shutdown before the program exits.
type Tracer struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	sampler sdktrace.Sampler // asked as a run starts: a run sampled out records nothing
	content bool

	mu      sync.RWMutex // guards closed against sends on queue
	closed  bool
	queue   chan *runRecord
	done    chan struct{}
	dropped atomic.Int64
}

// Option configures New.
type Option func(*config)

type config struct {
	content  bool
	resource *resource.Resource
	sampler  sdktrace.Sampler
}

// WithContent records prompts and completions (gen_ai.input.messages,
// gen_ai.output.messages), tool arguments and results
// (gen_ai.tool.call.arguments, gen_ai.tool.call.result) and interrupt
// payloads. Off by default: they may hold personal or secret data.
func WithContent(on bool) Option { return func(c *config) { c.content = on } }

// WithResource describes the process in every span (service.name, …); the
// default is service.name "weft" with the SDK's own attributes.
func WithResource(r *resource.Resource) Option { return func(c *config) { c.resource = r } }

// WithSampler replaces the default sampler (parent based, always
// sampling roots, or as OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG
// say). It is asked once per run, as the run starts: a run it samples out
// records no events and reads no link, so it costs next to nothing.
func WithSampler(s sdktrace.Sampler) Option { return func(c *config) { c.sampler = s } }

// New returns a Tracer exporting to exp (an otlptracehttp exporter, or any
// other). It starts the goroutine that builds spans; Shutdown stops it.
func New(exp sdktrace.SpanExporter, opts ...Option) (*Tracer, error) {
	if exp == nil {
		return nil, errors.New("telemetry: New needs a span exporter, got nil")
	}
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.resource == nil {
		r, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", "weft")))
		if err != nil {
			return nil, fmt.Errorf("telemetry: resource: %w", err)
		}
		c.resource = r
	}
	if c.sampler == nil {
		smp, err := samplerFromEnv()
		if err != nil {
			return nil, err
		}
		c.sampler = smp
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(c.resource), sdktrace.WithIDGenerator(presetIDs{}),
		sdktrace.WithBatcher(exp), sdktrace.WithSampler(c.sampler))
	t := &Tracer{
		tp:      tp,
		tracer:  tp.Tracer(ScopeName),
		sampler: c.sampler,
		content: c.content,
		queue:   make(chan *runRecord, queueSize),
		done:    make(chan struct{}),
	}
	go t.builder()
	return t, nil
}

// FromEnv returns a Tracer configured by OpenTelemetry's standard
// variables when they ask for traces, and nil, nil when they do not:
// traces are on with OTEL_TRACES_EXPORTER=otlp, or with
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set
// while OTEL_TRACES_EXPORTER is unset; OTEL_TRACES_EXPORTER=none or
// OTEL_SDK_DISABLED=true turn them off. The exporter speaks OTLP over
// HTTP with protobuf and reads every other OTEL_EXPORTER_OTLP_* variable
// itself (endpoint, headers, timeout, compression, certificates);
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES describe the process, and
// ContentEnv turns on contents. A value it cannot honour is an error
// naming the variable.
func FromEnv(ctx context.Context) (*Tracer, error) {
	on, err := envWantsTraces()
	if err != nil || !on {
		return nil, err
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(v); p != "" {
			if p != "http/protobuf" {
				return nil, fmt.Errorf("telemetry: %s=%q: only http/protobuf is supported", v, p)
			}
			break // the traces variable wins over the general one
		}
	}
	content := false
	if v := os.Getenv(ContentEnv); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("telemetry: %s=%q: want true or false", ContentEnv, v)
		}
		content = b
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "weft")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // after the default name: OTEL_SERVICE_NAME wins
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource from OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	return New(exp, WithContent(content), WithResource(res))
}

// samplerFromEnv is the sampler OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG name, as OpenTelemetry's SDKs read them; unset,
// parent based and always sampling roots. Weft must know the sampler to
// ask it as a run starts, so it reads them itself, and a value it cannot
// read is an error naming the variable (the SDK would fall back quietly).
func samplerFromEnv() (sdktrace.Sampler, error) {
	name := strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER"))
	arg := strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, fmt.Errorf("telemetry: OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1 for %s", arg, name)
		}
		return r, nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio", "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		if name == "traceidratio" {
			return sdktrace.TraceIDRatioBased(r), nil
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), nil
	}
	return nil, fmt.Errorf("telemetry: OTEL_TRACES_SAMPLER=%q: want always_on, always_off, traceidratio or their parentbased_ forms", name)
}

// envWantsTraces reads the variables that turn traces on or off.
func envWantsTraces() (bool, error) {
	if v := os.Getenv("OTEL_SDK_DISABLED"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("telemetry: OTEL_SDK_DISABLED=%q: want true or false", v)
		}
		if b {
			return false, nil
		}
	}
	switch exp := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exp {
	case "otlp":
		return true, nil
	case "none":
		return false, nil
	case "":
		return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("telemetry: OTEL_TRACES_EXPORTER=%q: Weft exports traces with otlp only (or none)", exp)
	}
}

// Instrument returns a copy of g whose every run is traced (g itself is
// not changed). A nil Tracer returns g, so callers need not check whether
// tracing is on.
func (t *Tracer) Instrument(g *engine.Graph) *engine.Graph {
	if t == nil {
		return g
	}
	return g.WithRunHook(t.hook)
}

// Dropped counts the runs whose spans were not built because the Tracer
// was shut down or too far behind.
func (t *Tracer) Dropped() int {
	if t == nil {
		return 0
	}
	return int(t.dropped.Load())
}

// ForceFlush builds the spans of every run that has ended and exports
// them, waiting until that is done or ctx ends.
func (t *Tracer) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	flushed := make(chan struct{})
	t.mu.RLock()
	if t.closed {
		t.mu.RUnlock()
		return nil
	}
	select {
	case t.queue <- &runRecord{flushed: flushed}:
	case <-ctx.Done():
		t.mu.RUnlock()
		return ctx.Err()
	}
	t.mu.RUnlock()
	select {
	case <-flushed:
	case <-ctx.Done():
		return ctx.Err()
	}
	return t.tp.ForceFlush(ctx)
}

// Shutdown builds the spans of the runs that have ended, exports them and
// stops the Tracer; runs that end later are not traced. It waits until
// ctx ends at most.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	if !t.closed {
		t.closed = true
		close(t.queue)
	}
	t.mu.Unlock()
	select {
	case <-t.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return t.tp.Shutdown(ctx)
}

// hook is the engine.RunHook of instrumented graphs: it names the run's
// span before the run starts (so its checkpoints can carry it), finds the
// span of the run that wrote the checkpoint it starts from, and records
// the run's events for the builder.
func (t *Tracer) hook(ctx context.Context, run engine.RunInfo) engine.RunHooks {
	rec := &runRecord{
		start:  time.Now(),
		graph:  run.Graph.Name(),
		thread: run.Thread,
		from:   run.Checkpoint,
		parent: trace.SpanContextFromContext(ctx),
	}
	switch in := run.Input.(type) {
	case nil:
		rec.resume = true
	case engine.Command:
		rec.resume = in.Resume != nil || in.ResumeByID != nil
	}
	if rec.parent.IsValid() {
		rec.traceID = rec.parent.TraceID()
	} else {
		rec.traceID = newTraceID()
	}
	if !t.sampled(rec) {
		return engine.RunHooks{} // no span will be built: record nothing
	}
	rec.spanID = newSpanID()
	if s := run.Graph.Saver(); s != nil && run.Thread != "" {
		rec.link, rec.linkCheckpoint = previousSpan(ctx, s, run.Thread, run.Checkpoint)
	}
	return engine.RunHooks{
		Metadata: map[string]any{MetadataKey: traceparent(rec.traceID, rec.spanID)},
		Modes:    engine.ModeLifecycle | engine.ModeCalls,
		OnEvent:  rec.add,
		OnEnd: func(res *engine.Result, err error) {
			rec.end, rec.res, rec.err = time.Now(), res, err
			t.enqueue(rec)
		},
	}
}

// sampled asks the sampler about the run's span as build will start it:
// same parent, trace id, name and kind.
func (t *Tracer) sampled(rec *runRecord) bool {
	ctx := context.Background()
	if rec.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, rec.parent)
	}
	r := t.sampler.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: rec.traceID,
		Name: "invoke_agent " + rec.graph, Kind: trace.SpanKindInternal})
	return r.Decision != sdktrace.Drop
}

// enqueue hands a finished run to the builder, or drops it when the
// Tracer is shut down or its queue is full.
func (t *Tracer) enqueue(rec *runRecord) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		t.dropped.Add(1)
		return
	}
	select {
	case t.queue <- rec:
	default:
		t.dropped.Add(1)
	}
}

// builder turns finished runs into spans until Shutdown.
func (t *Tracer) builder() {
	defer close(t.done)
	for rec := range t.queue {
		if rec.flushed != nil {
			close(rec.flushed)
			continue
		}
		t.build(rec)
	}
}

// previousSpan reads the span context a traced run left in the metadata
// of the checkpoint a run of thread starts from (id, or the latest). A
// checkpoint without one, or none at all, gives an invalid context.
func previousSpan(ctx context.Context, s checkpoint.Saver, thread, id string) (trace.SpanContext, string) {
	tup, err := s.Get(ctx, checkpoint.Ref{ThreadID: thread, CheckpointID: id})
	if err != nil || tup == nil {
		return trace.SpanContext{}, "" // a new thread, or the run reports the store's failure itself
	}
	v, _ := tup.Metadata.Extra[MetadataKey].(string)
	sc, ok := parseTraceparent(v)
	if !ok {
		return trace.SpanContext{}, ""
	}
	return sc, tup.Ref.CheckpointID
}
