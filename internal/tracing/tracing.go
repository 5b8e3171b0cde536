// Package tracing carries W3C trace context (traceparent, tracestate)
// through NATS message headers and the records jetsched stores, and tells
// whether a trace.TracerProvider records anything. It holds no state: the
// provider is always passed in (Config.TracerProvider of the engine, the
// admin API and the worker), never read from otel's global.
package tracing

import (
	"context"
	"strings"

	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Header names of W3C trace context, lower case as the W3C recommends and
// as most NATS instrumentations write them.
const (
	HeaderTraceParent = "traceparent"
	HeaderTraceState  = "tracestate"
)

// Scope is the instrumentation scope name of jetsched's spans.
const Scope = "github.com/jetsched/jetsched"

// propagator is stateless: a value, not a package variable to mutate.
func propagator() propagation.TraceContext { return propagation.TraceContext{} }

// Enabled reports whether tp may record spans: false for nil and for
// otel's noop provider, so that callers skip all tracing work when
// tracing is off.
func Enabled(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case nil, noop.TracerProvider, *noop.TracerProvider:
		return false
	}
	return true
}

// Tracer is tp's tracer for jetsched's spans, or a noop one when tp is nil.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return noop.NewTracerProvider().Tracer(Scope)
	}
	return tp.Tracer(Scope)
}

// Carrier adapts NATS headers to propagation.TextMapCarrier. NATS header
// names are case-sensitive: Set writes the lower-case W3C names, Get
// takes an exact match first and then any case ("Traceparent" from a
// client that canonicalises names).
type Carrier nats.Header

// Get returns the first value of key.
func (c Carrier) Get(key string) string {
	if v := c[key]; len(v) > 0 {
		return v[0]
	}
	for k, v := range c {
		if len(v) > 0 && strings.EqualFold(k, key) {
			return v[0]
		}
	}
	return ""
}

// Set replaces the values of key.
func (c Carrier) Set(key, value string) { c[key] = []string{value} }

// Keys lists the header names.
func (c Carrier) Keys() []string {
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	return out
}

// Inject writes the trace context of ctx's span into h, only when that
// span context is valid: a message sent without a trace gets no header.
func Inject(ctx context.Context, h nats.Header) {
	if h == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	propagator().Inject(ctx, Carrier(h))
}

// Extract returns ctx with the remote span context that h carries, or ctx
// itself when h has no valid traceparent.
func Extract(ctx context.Context, h nats.Header) context.Context {
	if len(h) == 0 || Carrier(h).Get(HeaderTraceParent) == "" {
		return ctx
	}
	return propagator().Extract(ctx, Carrier(h))
}

// Format returns the traceparent and tracestate of sc ("" and "" when sc
// is not valid).
func Format(sc trace.SpanContext) (traceparent, tracestate string) {
	if !sc.IsValid() {
		return "", ""
	}
	c := propagation.MapCarrier{}
	propagator().Inject(trace.ContextWithSpanContext(context.Background(), sc), c)
	return c[HeaderTraceParent], c[HeaderTraceState]
}

// Parse reads a traceparent and tracestate into a remote span context; ok
// is false when traceparent is not a valid W3C traceparent (an invalid
// tracestate is dropped, as the W3C says).
func Parse(traceparent, tracestate string) (sc trace.SpanContext, ok bool) {
	if traceparent == "" {
		return trace.SpanContext{}, false
	}
	c := propagation.MapCarrier{HeaderTraceParent: traceparent}
	if tracestate != "" {
		c[HeaderTraceState] = tracestate
	}
	sc = trace.SpanContextFromContext(propagator().Extract(context.Background(), c))
	return sc, sc.IsValid()
}

// Remote returns the remote span context a record's trace context holds
// (a spec's, a trigger's, a claim's: kvstore.TraceContext); ok is false
// for a nil t or an invalid traceparent.
func Remote(t *kvstore.TraceContext) (sc trace.SpanContext, ok bool) {
	if t == nil {
		return trace.SpanContext{}, false
	}
	return Parse(t.TraceParent, t.TraceState)
}

// Attributes of jetsched's spans (docs/tracing.md).
const (
	AttrScheduleID  = "jetsched.schedule.id"
	AttrWorkflow    = "jetsched.workflow"
	AttrSlotID      = "jetsched.slot.id"
	AttrScheduledAt = "jetsched.scheduled_at" // RFC 3339, UTC
	AttrLatenessMs  = "jetsched.lateness_ms"  // dispatch (or receipt) minus scheduled time
	AttrReason      = "jetsched.reason"       // Sched-Reason, when set
	AttrInstance    = "jetsched.instance"
	AttrStreamSeq   = "jetsched.stream.seq"
	AttrDuplicate   = "jetsched.duplicate" // the stream had the slot already
	AttrDelivery    = "jetsched.delivery"  // the worker's delivery count
	AttrVerb        = "jetsched.api.verb"
	AttrLinkKind    = "jetsched.link"
)

// LinkSchedule is the attribute of a dispatch span's link to the span
// that wrote the schedule.
func LinkSchedule() attribute.KeyValue { return attribute.String(AttrLinkKind, "schedule") }
