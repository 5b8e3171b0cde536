package kvstore

// TraceContext is a W3C trace context kept in a record: in a spec, the
// span that wrote its current content (each dispatch span links to it);
// in a trigger and its claim, the span that asked for the extra fire (the
// parent of that fire's dispatch span). Optional: records without it, and
// writers without a trace, leave it out (docs/records.md, docs/tracing.md).
//
//	"trace":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
type TraceContext struct {
	// TraceParent is the W3C traceparent ("00-<trace id>-<span id>-<flags>").
	TraceParent string `json:"traceparent"`
	// TraceState is the W3C tracestate, when the span had one.
	TraceState string `json:"tracestate,omitempty"`
}
