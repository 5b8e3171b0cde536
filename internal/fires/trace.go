package fires

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// dispatchSpan starts the span of the fire of claim c, dispatched now, and
// writes its context into the fire's headers h (docs/tracing.md). Its
// parent is the trigger's span for a triggered fire (c.Trace), else none;
// it links to the span that wrote the schedule's spec (j.trace). When the
// engine does not trace it returns a span that records nothing and writes
// no header, at no cost.
func (e *Engine) dispatchSpan(j slotJob, c kvstore.Claim, reason string, now time.Time, h nats.Header) trace.Span {
	if !e.traced {
		return trace.SpanFromContext(context.Background()) // the no-op span: no allocation
	}
	ctx := context.Background()
	if sc, ok := tracing.Remote(c.Trace); ok {
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithTimestamp(now),
		trace.WithAttributes(
			attribute.String(tracing.AttrScheduleID, j.id),
			attribute.String(tracing.AttrWorkflow, j.workflow),
			attribute.String(tracing.AttrSlotID, c.ID(j.id)),
			attribute.String(tracing.AttrScheduledAt, c.Slot.UTC().Format(time.RFC3339Nano)),
			attribute.Int64(tracing.AttrLatenessMs, now.Sub(c.Slot).Milliseconds()),
			attribute.String(tracing.AttrInstance, e.cfg.Instance),
			attribute.String("messaging.system", "nats"),
			attribute.String("messaging.operation.type", "send"),
			attribute.String("messaging.destination.name", e.store.Layout().FireSubject(j.workflow, j.id)),
		),
	}
	if reason != "" {
		opts = append(opts, trace.WithAttributes(attribute.String(tracing.AttrReason, reason)))
	}
	if sc, ok := tracing.Remote(j.trace); ok {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{tracing.LinkSchedule()}}))
	}
	ctx, span := e.tracer.Start(ctx, "dispatch "+j.workflow, opts...)
	tracing.Inject(ctx, h)
	return span
}

// endSpan ends a dispatch span with the outcome of its publish: the
// stream's sequence and whether the stream had the slot already, or the
// error.
func endSpan(span trace.Span, ack *jetstream.PubAck, err error) {
	if !span.IsRecording() {
		return
	}
	if ack != nil {
		span.SetAttributes(attribute.Int64(tracing.AttrStreamSeq, int64(ack.Sequence)), attribute.Bool(tracing.AttrDuplicate, ack.Duplicate))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
