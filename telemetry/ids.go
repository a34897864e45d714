package telemetry

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// A run's span is built after the run, but its ids must be known before
// it, to be stored in its checkpoints: the run's ids are drawn as it
// starts and handed to the SDK through the context by presetIDs.

type presetKey struct{}

// presetIDs is the Tracer's ID generator: the ids a context carries
// (withIDs), random ones otherwise.
type presetIDs struct{}

type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, presetKey{}, ids{t, s})
}

// NewIDs gives a root span its ids.
func (presetIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if p, ok := ctx.Value(presetKey{}).(ids); ok {
		return p.trace, p.span
	}
	return newTraceID(), newSpanID()
}

// NewSpanID gives a span with a parent its id.
func (presetIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if p, ok := ctx.Value(presetKey{}).(ids); ok {
		return p.span
	}
	return newSpanID()
}

// newTraceID draws a random, valid trace id (math/rand/v2 is seeded from
// the system's entropy and safe for concurrent use; ids need to be
// unique, not secret).
func newTraceID() trace.TraceID {
	var t trace.TraceID
	for !t.IsValid() {
		binary.BigEndian.PutUint64(t[:8], rand.Uint64())
		binary.BigEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t
}

func newSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.BigEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}

// traceparent writes a span context as W3C Trace Context's traceparent,
// sampled flag set: the flag that counts is the one the sampler gives the
// span when it is built, and a link needs only the ids.
func traceparent(t trace.TraceID, s trace.SpanID) string {
	b := make([]byte, 0, 55)
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, t[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, s[:])
	b = append(b, "-01"...)
	return string(b)
}

// parseTraceparent reads what traceparent wrote (version 00).
func parseTraceparent(v string) (trace.SpanContext, bool) {
	if len(v) != 55 || v[:3] != "00-" || v[35] != '-' || v[52] != '-' {
		return trace.SpanContext{}, false
	}
	var t trace.TraceID
	var s trace.SpanID
	var f [1]byte
	if _, err := hex.Decode(t[:], []byte(v[3:35])); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(s[:], []byte(v[36:52])); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(f[:], []byte(v[53:])); err != nil {
		return trace.SpanContext{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: t, SpanID: s, TraceFlags: trace.TraceFlags(f[0]), Remote: true})
	return sc, sc.IsValid()
}
