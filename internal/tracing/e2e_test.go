package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/client"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// handled is what a handler saw: its fire and the span context of its ctx.
type handled struct {
	fire worker.Fire
	sc   trace.SpanContext
}

// stack is an admin API, a fire engine and a worker of workflow "report"
// on one embedded server, all tracing to one in-memory exporter.
type stack struct {
	nc      *nats.Conn
	store   *jsstore.Store
	handled chan handled
	client  *client.Client
}

func newStack(t *testing.T, tp trace.TracerProvider) *stack {
	t.Helper()
	ctx := context.Background()
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	s := &stack{nc: js.Conn(), store: store, handled: make(chan handled, 64)}
	// As scheduler run does: with tracing on, the API's spec writes keep
	// the caller's trace context.
	store.RecordSpecTraces(tracing.Enabled(tp))
	api, err := adminapi.Start(ctx, adminapi.Config{Conn: s.nc, Store: store, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Stop() })
	engine, err := fires.New(fires.Config{Store: store, Instance: "traced", TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Stop(context.Background()) })
	w, err := worker.New(worker.Config{JetStream: js, Name: "svc", TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Handle("report", func(ctx context.Context, f worker.Fire) error {
		select {
		case s.handled <- handled{fire: f, sc: trace.SpanContextFromContext(ctx)}:
		default:
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.StopAndCancel(sctx)
	})
	var opts []client.ClientOption
	if tracing.Enabled(tp) {
		opts = append(opts, client.WithSpecTraces())
	}
	if s.client, err = client.New(ctx, js, opts...); err != nil {
		t.Fatal(err)
	}
	return s
}

// call sends an admin API request as any NATS client would, with the
// trace context of ctx's span in its headers.
func (s *stack) call(t *testing.T, ctx context.Context, verb, body string) map[string]any {
	t.Helper()
	m := nats.NewMsg("sched.api." + verb)
	m.Data = []byte(body)
	tracing.Inject(ctx, m.Header)
	reply, err := s.nc.RequestMsgWithContext(ctx, m)
	if err != nil {
		t.Fatalf("%s: %v", verb, err)
	}
	if code := reply.Header.Get("Nats-Service-Error-Code"); code != "" {
		t.Fatalf("%s: %s %s", verb, code, reply.Data)
	}
	var out map[string]any
	if err := json.Unmarshal(reply.Data, &out); err != nil {
		t.Fatalf("%s: %v: %s", verb, err, reply.Data)
	}
	return out
}

// recorder is a TracerProvider that exports every ended span to the
// in-memory exporter at once.
func recorder(t *testing.T) (*tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return exp, tp
}

// span waits for the ended span that match accepts.
func span(t *testing.T, exp *tracetest.InMemoryExporter, what string, match func(tracetest.SpanStub) bool) tracetest.SpanStub {
	t.Helper()
	var found tracetest.SpanStub
	err := testwait.Until(20*time.Second, what, func() error {
		for _, s := range exp.GetSpans() {
			if match(s) {
				found = s
				return nil
			}
		}
		return fmt.Errorf("%d spans, none matches", len(exp.GetSpans()))
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func attr(s tracetest.SpanStub, key string) string {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// TestTraceFromAPICallToHandler follows one schedule through the whole
// path: a caller's span puts it through the admin API and, in another
// trace, triggers it. The API spans are children of the callers' spans;
// every dispatch span links to the put's span; the triggered fire's
// dispatch span is the child of the trigger's API span, a regular fire's
// is a root; the handler's span is the child of its dispatch span, and the
// handler's ctx carries it. A client listing joins the caller's trace.
func TestTraceFromAPICallToHandler(t *testing.T) {
	t.Parallel()
	exp, tp := recorder(t)
	s := newStack(t, tp)
	caller := tp.Tracer("test")
	ctx := context.Background()

	putCtx, putCaller := caller.Start(ctx, "caller put")
	s.call(t, putCtx, "schedule.create", `{"id":"traced","spec":{"workflow":"report","every":"1s"}}`)
	putCaller.End()
	put := span(t, exp, "the schedule.create span", func(sp tracetest.SpanStub) bool { return sp.Name == "schedule.create" })
	if put.Parent.SpanID() != putCaller.SpanContext().SpanID() || put.SpanContext.TraceID() != putCaller.SpanContext().TraceID() {
		t.Fatalf("schedule.create span parent %s in trace %s, want the caller's span %s", put.Parent.SpanID(), put.SpanContext.TraceID(), putCaller.SpanContext().SpanID())
	}
	e, err := s.store.GetSpec(ctx, "traced")
	if err != nil {
		t.Fatal(err)
	}
	if sc, ok := tracing.Remote(e.Spec.Trace); !ok || sc.SpanID() != put.SpanContext.SpanID() {
		t.Fatalf("stored spec trace %+v, want the schedule.create span %s", e.Spec.Trace, put.SpanContext.SpanID())
	}

	trigCtx, trigCaller := caller.Start(ctx, "caller trigger")
	out := s.call(t, trigCtx, "schedule.trigger", `{"id":"traced","note":"now"}`)
	trigCaller.End()
	slot, _ := out["slot_id"].(string)
	trig := span(t, exp, "the schedule.trigger span", func(sp tracetest.SpanStub) bool { return sp.Name == "schedule.trigger" })
	if trig.Parent.SpanID() != trigCaller.SpanContext().SpanID() || trig.SpanContext.TraceID() != trigCaller.SpanContext().TraceID() {
		t.Fatalf("schedule.trigger span parent %s, want the caller's span %s", trig.Parent.SpanID(), trigCaller.SpanContext().SpanID())
	}

	linksToPut := func(sp tracetest.SpanStub) bool {
		for _, l := range sp.Links {
			if l.SpanContext.SpanID() == put.SpanContext.SpanID() && l.SpanContext.TraceID() == put.SpanContext.TraceID() {
				return true
			}
		}
		return false
	}
	dispatchTrig := span(t, exp, "the triggered fire's dispatch span", func(sp tracetest.SpanStub) bool {
		return sp.Name == "dispatch report" && attr(sp, tracing.AttrSlotID) == slot
	})
	if dispatchTrig.Parent.SpanID() != trig.SpanContext.SpanID() || dispatchTrig.SpanContext.TraceID() != trig.SpanContext.TraceID() {
		t.Fatalf("triggered dispatch span parent %s trace %s, want the trigger's span %s trace %s",
			dispatchTrig.Parent.SpanID(), dispatchTrig.SpanContext.TraceID(), trig.SpanContext.SpanID(), trig.SpanContext.TraceID())
	}
	if !linksToPut(dispatchTrig) {
		t.Fatalf("triggered dispatch span links %+v, want the schedule.create span", dispatchTrig.Links)
	}
	if got := attr(dispatchTrig, tracing.AttrScheduleID); got != "traced" || attr(dispatchTrig, tracing.AttrReason) != kvstore.ReasonTrigger || attr(dispatchTrig, tracing.AttrScheduledAt) == "" || attr(dispatchTrig, tracing.AttrLatenessMs) == "" {
		t.Fatalf("triggered dispatch span attributes %v", dispatchTrig.Attributes)
	}
	regular := span(t, exp, "a regular fire's dispatch span", func(sp tracetest.SpanStub) bool {
		return sp.Name == "dispatch report" && attr(sp, tracing.AttrSlotID) != slot
	})
	if regular.Parent.IsValid() || !linksToPut(regular) {
		t.Fatalf("regular dispatch span parent %v links %+v, want a root linked to the schedule.create span", regular.Parent, regular.Links)
	}

	handle := span(t, exp, "the triggered fire's handler span", func(sp tracetest.SpanStub) bool {
		return sp.Name == "handle report" && attr(sp, tracing.AttrSlotID) == slot
	})
	if handle.Parent.SpanID() != dispatchTrig.SpanContext.SpanID() || handle.SpanContext.TraceID() != trig.SpanContext.TraceID() {
		t.Fatalf("handler span parent %s, want the dispatch span %s", handle.Parent.SpanID(), dispatchTrig.SpanContext.SpanID())
	}
	for {
		h := testwait.Receive(t, 20*time.Second, "the triggered fire's handler", s.handled)
		if h.fire.SlotID != slot {
			continue
		}
		if h.sc.SpanID() != handle.SpanContext.SpanID() || h.sc.TraceID() != handle.SpanContext.TraceID() {
			t.Fatalf("handler ctx span %s/%s, want the handler span %s", h.sc.TraceID(), h.sc.SpanID(), handle.SpanContext.SpanID())
		}
		break
	}

	listCtx, listCaller := caller.Start(ctx, "caller list")
	if _, err := s.client.List(listCtx, client.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	listCaller.End()
	list := span(t, exp, "the schedule.list span", func(sp tracetest.SpanStub) bool { return sp.Name == "schedule.list" })
	if list.Parent.SpanID() != listCaller.SpanContext().SpanID() {
		t.Fatalf("schedule.list span parent %s, want the client caller's %s", list.Parent.SpanID(), listCaller.SpanContext().SpanID())
	}
}

// TestClientTriggerParentsDispatch: client.Trigger writes the state
// itself (no API); the caller's span is kept with the trigger and parents
// the triggered fire's dispatch span, and client.Schedule keeps the
// caller's span with the spec for the dispatch spans' link.
func TestClientTriggerParentsDispatch(t *testing.T) {
	t.Parallel()
	exp, tp := recorder(t)
	s := newStack(t, tp)
	caller := tp.Tracer("test")
	ctx := context.Background()
	sctx, put := caller.Start(ctx, "register")
	key, err := s.client.Schedule(sctx, "report", nil, client.Every(time.Hour), client.WithKey("hourly"))
	put.End()
	if err != nil {
		t.Fatal(err)
	}
	tctx, trig := caller.Start(ctx, "operator trigger")
	slot, err := s.client.Trigger(tctx, key, "")
	trig.End()
	if err != nil {
		t.Fatal(err)
	}
	d := span(t, exp, "the dispatch span of "+slot, func(sp tracetest.SpanStub) bool {
		return strings.HasPrefix(sp.Name, "dispatch ") && attr(sp, tracing.AttrSlotID) == slot
	})
	if d.Parent.SpanID() != trig.SpanContext().SpanID() {
		t.Fatalf("dispatch parent %s, want the trigger caller's span %s", d.Parent.SpanID(), trig.SpanContext().SpanID())
	}
	if len(d.Links) != 1 || d.Links[0].SpanContext.SpanID() != put.SpanContext().SpanID() {
		t.Fatalf("dispatch links %+v, want the registering span %s", d.Links, put.SpanContext().SpanID())
	}
}

// TestSpecTraceOffByDefault: a client made without WithSpecTraces, and a
// store without RecordSpecTraces, write no trace field into a spec even
// when the caller's ctx has a span: a scheduler of the previous release,
// which refuses a field it does not know, still fires the schedules that
// a traced service registers with this release's client.
func TestSpecTraceOffByDefault(t *testing.T) {
	t.Parallel()
	_, tp := recorder(t)
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	c, err := client.New(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	sctx, sp := tp.Tracer("test").Start(context.Background(), "register")
	defer sp.End()
	if _, err := c.Schedule(sctx, "report", nil, client.Every(time.Hour), client.WithKey("plain")); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutSpec(sctx, "direct", kvstore.Spec{Workflow: "report", Every: "1h"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"plain", "direct"} {
		e, err := store.GetSpec(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Spec.Trace != nil {
			t.Errorf("spec %s has trace %+v: written without RecordSpecTraces", id, e.Spec.Trace)
		}
	}
}

// TestNoTracingNoHeaders: with no TracerProvider (the default) and no
// trace context anywhere, a fire carries no traceparent or tracestate and
// the handler's ctx has no span context.
func TestNoTracingNoHeaders(t *testing.T) {
	t.Parallel()
	s := newStack(t, nil)
	ctx := context.Background()
	sub, err := s.nc.SubscribeSync("sched.fire.report.>")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	s.call(t, ctx, "schedule.create", `{"id":"plain","spec":{"workflow":"report","every":"1h"}}`)
	out := s.call(t, ctx, "schedule.trigger", `{"id":"plain"}`)
	msg, err := sub.NextMsg(20 * time.Second)
	if err != nil {
		t.Fatalf("the triggered fire: %v", err)
	}
	if msg.Header.Get(kvstore.HeaderMsgID) != out["slot_id"] {
		t.Fatalf("fire %s, want %s", msg.Header.Get(kvstore.HeaderMsgID), out["slot_id"])
	}
	for k := range msg.Header {
		if strings.EqualFold(k, tracing.HeaderTraceParent) || strings.EqualFold(k, tracing.HeaderTraceState) {
			t.Fatalf("fire has header %s without tracing: %v", k, msg.Header)
		}
	}
	h := testwait.Receive(t, 20*time.Second, "the handler", s.handled)
	if h.sc.IsValid() {
		t.Fatalf("handler ctx has span context %v without tracing", h.sc)
	}
	e, err := s.store.GetSpec(ctx, "plain")
	if err != nil || e.Spec.Trace != nil {
		t.Fatalf("spec trace %+v (%v), want none", e.Spec.Trace, err)
	}
}
