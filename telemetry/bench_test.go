package telemetry_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples/bench"
	"github.com/weftstudio/weft/telemetry"
)

// Each benchmark reports, beside its wall time, cpu-ns/op: the process's
// CPU time per run, all goroutines included, which a machine shared with
// other work disturbs less than wall time.

// discard is an exporter that drops spans: the benchmarks measure Weft's
// side, not a collector's.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

func benchB1(b *testing.B, traced bool, flushEach bool, opts ...telemetry.Option) {
	g, err := bench.Chain10()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var tr *telemetry.Tracer
	if traced {
		tr, err = telemetry.New(discard{}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		defer tr.Shutdown(ctx)
		g = tr.Instrument(g)
	}
	in := engine.Values{"count": 0}
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		res, err := g.Invoke(ctx, in)
		if err != nil || res.Values["count"] != 10 {
			b.Fatal(err, res)
		}
		if flushEach {
			if err := tr.ForceFlush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if tr != nil { // the spans still being built are part of the cost
		if err := tr.ForceFlush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	b.StopTimer()
	if tr != nil {
		if d := tr.Dropped(); d > 0 {
			b.ReportMetric(float64(d)/float64(b.N), "dropped/op")
		}
	}
}

// BenchmarkB1Untraced is B1 (examples/bench.Chain10, no saver) as the
// engine runs it, for comparison with the traced runs below.
func BenchmarkB1Untraced(b *testing.B) { benchB1(b, false, false) }

// BenchmarkB1Traced is B1 traced: what a run pays (its events recorded,
// handed to the Tracer), the spans being built on the Tracer's goroutine.
func BenchmarkB1Traced(b *testing.B) { benchB1(b, true, false) }

// BenchmarkB1TracedFlushed is B1 traced with each run's 21 spans built and
// handed to the exporter before the next run: the whole work of tracing.
func BenchmarkB1TracedFlushed(b *testing.B) { benchB1(b, true, true) }

// BenchmarkB1TracedUnsampled is B1 traced with every run sampled out: what
// the run itself pays to be traceable (its events recorded, its span's ids
// drawn and stored), the spans not built.
func BenchmarkB1TracedUnsampled(b *testing.B) {
	benchB1(b, true, false, telemetry.WithSampler(sdktrace.NeverSample()))
}

// BenchmarkB1TracedTenth is B1 traced with one run in ten sampled
// (traceidratio 0.1, as a busy service would set OTEL_TRACES_SAMPLER):
// the others are asked and record nothing.
func BenchmarkB1TracedTenth(b *testing.B) {
	benchB1(b, true, false, telemetry.WithSampler(sdktrace.TraceIDRatioBased(0.1)))
}
