package worker

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/tracing"
)

// handlerSpan starts the span a handler runs in, the child of the trace
// context in ctx (the dispatch span's, from the message's headers); when
// the worker does not trace it returns ctx and a span that records
// nothing.
func (w *Worker) handlerSpan(ctx context.Context, d Delivery) (context.Context, trace.Span) {
	if !w.traced {
		return ctx, trace.SpanFromContext(ctx)
	}
	attrs := []attribute.KeyValue{
		attribute.String(tracing.AttrWorkflow, d.Workflow),
		attribute.Int(tracing.AttrDelivery, d.Number),
		attribute.String("messaging.system", "nats"),
		attribute.String("messaging.operation.type", "process"),
		attribute.String("messaging.destination.name", d.Subject),
		attribute.String("messaging.message.id", d.ID),
	}
	if d.ScheduleID != "" {
		attrs = append(attrs, attribute.String(tracing.AttrScheduleID, d.ScheduleID), attribute.String(tracing.AttrSlotID, d.ID))
	}
	name := "handle " + d.Workflow
	if d.Kind == KindWakeup {
		name = "handle wakeup " + d.Workflow
	}
	return w.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
}

// endHandlerSpan ends a handler's span with its error, if any.
func endHandlerSpan(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
