package jsstore

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TraceContextOf returns the trace context of ctx's span, as a record
// keeps it (a spec's trace, a trigger's), or nil when ctx carries no valid
// span context.
func TraceContextOf(ctx context.Context) *kvstore.TraceContext {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	tp, ts := tracing.Format(sc)
	return &kvstore.TraceContext{TraceParent: tp, TraceState: ts}
}
