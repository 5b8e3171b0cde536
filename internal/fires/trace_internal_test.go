package fires

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// fireMsgFixture is an engine (not started) over a real server's store,
// and a traced schedule's job and claim, for building fire messages.
func fireMsgFixture(tb testing.TB, tp trace.TracerProvider) (*Engine, slotJob, kvstore.Claim) {
	tb.Helper()
	_, store := natstest.Start(tb).Store(tb)
	e, err := New(Config{Store: store, Instance: "bench", TracerProvider: tp})
	if err != nil {
		tb.Fatal(err)
	}
	put := &kvstore.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	spec := kvstore.Spec{Workflow: "report", Input: []byte(`{"n":1}`), Trace: put}
	j := slotJob{id: "daily", target: targetOf(&spec, e.traced), compiled: sched{Location: time.UTC}}
	slot := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	c := kvstore.Claim{Slot: slot, Token: "t", Owner: "bench", At: slot, Expires: slot.Add(30 * time.Second)}
	return e, j, c
}

// TestFireMsgTraceHeaders: a traced engine's fire carries its dispatch
// span's traceparent, the span links to the spec's writer; an engine
// without a provider adds no header and keeps no trace context.
func TestFireMsgTraceHeaders(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	e, j, c := fireMsgFixture(t, tp)
	msg, _, span := e.fireMsg(j, c, "")
	endSpan(span, nil, nil)
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "dispatch report" || len(spans[0].Links) != 1 {
		t.Fatalf("spans %+v, want one dispatch span with one link", spans)
	}
	want, _ := tracing.Format(spans[0].SpanContext)
	if got := msg.Header.Get(tracing.HeaderTraceParent); got != want {
		t.Fatalf("traceparent %q, want the dispatch span's %q", got, want)
	}

	off, j, c := fireMsgFixture(t, nil)
	if j.trace != nil {
		t.Fatalf("an engine without tracing keeps the spec's trace context %+v", j.trace)
	}
	j.trace = &kvstore.TraceContext{TraceParent: want}
	c.Trace = j.trace // a traced trigger: still no header without a provider
	msg, _, span = off.fireMsg(j, c, "")
	endSpan(span, nil, nil)
	if _, ok := msg.Header[tracing.HeaderTraceParent]; ok || span.IsRecording() {
		t.Fatalf("untraced engine: headers %v, recording %v", msg.Header, span.IsRecording())
	}
}

// BenchmarkFireMessage builds a fire message (headers, and with tracing
// on its dispatch span and trace headers) with tracing off (no provider)
// and on (an SDK provider sampling everything, exporting to memory, which
// is reset as it goes). Run with
//
//	go test -run '^$' -bench FireMessage -benchmem ./internal/fires
func BenchmarkFireMessage(b *testing.B) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	for _, c := range []struct {
		name string
		tp   trace.TracerProvider
	}{{"off", nil}, {"on", tp}} {
		b.Run(c.name, func(b *testing.B) {
			e, j, cl := fireMsgFixture(b, c.tp)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_, _, span := e.fireMsg(j, cl, "")
				endSpan(span, nil, nil)
				if i%1024 == 0 {
					exp.Reset()
				}
			}
		})
	}
}
