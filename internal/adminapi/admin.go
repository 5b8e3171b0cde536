// Package adminapi is the admin API's service: a NATS micro service on
// sched.api.> ("jetsched", discoverable with `nats micro ls`) that every
// scheduler process runs, so that a remote fleet is operated with a NATS
// connection and the rights on sched.api.> alone. Its wire contract
// (requests, replies, error codes) is internal/admin (docs/api.md). Schedules
// are shown as the read model (internal/readmodel) sees them; operator
// actions go through internal/control. Listings are paginated and served
// from a catalogue of schedule ids and timer keys that the service keeps
// sorted in memory from KV watches, so that a page costs the same at a
// million schedules as at ten.
package adminapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Config configures the admin service.
type Config struct {
	// Conn is the NATS connection the service answers on. Required.
	Conn *nats.Conn
	// Store is where the records live. Required.
	Store *jsstore.Store
	// Logger receives failures. Default: discard.
	Logger *slog.Logger
	// Timeout bounds each request. Default 30s.
	Timeout time.Duration
	// MaxBackfillSlots caps the slots one backfill request may replay.
	// Default control.DefaultMaxBackfillSlots.
	MaxBackfillSlots int
	// TracerProvider, when it records (not nil, not otel's noop), runs
	// each request in a server span named after its verb
	// ("schedule.create", "schedule.trigger", ...; docs/tracing.md), the
	// child of the trace context the request's traceparent header carries.
	// Either way that context reaches the store, which keeps it with the
	// schedule or trigger written. Default: no spans.
	TracerProvider trace.TracerProvider
	// Interner, when set, is shared with the listing catalogue's checks
	// of every spec (zones and parsed crons), so that a process that also
	// runs the scheduler keeps one copy of each. Default: the service's
	// own.
	Interner *compile.Interner
	// LoadAfter, when set, holds the listing catalogue's load back until
	// it is closed. A process that also runs the scheduler passes its
	// index's Ready: at a cold start of a million schedules both would
	// decode every spec and state record at once on the same cores, and
	// the scheduler's index is what fires. Listings asked meanwhile answer
	// "unavailable" after a few seconds, as during the load itself.
	LoadAfter <-chan struct{}
	// ConditionBuckets are the KV buckets a timer's condition key may
	// name (the scheduler's, scheduler run --condition-buckets):
	// wakeup.add refuses any other (code invalid, field condition_key).
	// Default: none, so a condition key is refused.
	ConditionBuckets []string
}

// Service is a running admin API.
type Service struct {
	svc     micro.Service
	unknown *nats.Subscription
	cat     *catalog
	// cancel ends the context every request runs under, so that Stop
	// (the daemon's SIGTERM) cuts a long computation short.
	cancel context.CancelFunc
}

// Start registers the service on cfg.Conn and starts loading its listing
// catalogue in the background; listings wait for it (or answer
// "unavailable" while a large one loads). Stop ends both.
func Start(ctx context.Context, cfg Config) (*Service, error) {
	if cfg.Conn == nil || cfg.Store == nil {
		return nil, errors.New("admin: Config.Conn and Config.Store are required")
	}
	log := cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil)))
	timeout := cmp.Or(cfg.Timeout, 30*time.Second)
	cat := newCatalog(cfg.Store, log)
	cat.check.in, cat.after = cfg.Interner, cfg.LoadAfter
	if err := fieldcheck.ConditionBuckets(cfg.ConditionBuckets, cfg.Store.Layout().WithDefaults().Prefix); err != nil {
		return nil, fmt.Errorf("admin: Config.ConditionBuckets: %w", err)
	}
	h := newHandlers(cfg.Store, cat, cfg.Conn, cfg.MaxBackfillSlots)
	h.timers.ConditionBuckets = append([]string{}, cfg.ConditionBuckets...) // not nil: none is none
	svc, err := micro.AddService(cfg.Conn, micro.Config{
		Name: "jetsched", Version: admin.Version,
		Description: "jetsched admin API: schedules, calendars, timers, status, history, accounts",
	})
	if err != nil {
		return nil, fmt.Errorf("admin: add service: %w", err)
	}
	// Requests run under a context of the service's own, ended by Stop,
	// rather than Start's, which may bound the start only.
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{svc: svc, cat: cat, cancel: cancel}
	own := ownAccount(cfg.Conn)
	logActors(ctx, log, own)
	prefix := cfg.Store.Layout().Prefix + ".api"
	g := svc.AddGroup(prefix)
	table := h.table()
	tracer, traced := tracing.Tracer(cfg.TracerProvider), tracing.Enabled(cfg.TracerProvider)
	for name, fn := range table {
		handler := micro.HandlerFunc(func(req micro.Request) {
			ctx, cancel := context.WithTimeout(base, timeout)
			defer cancel()
			ctx = tracing.Extract(ctx, nats.Header(req.Headers()))
			if why := unsolicited(req.Reply()); why != "" {
				log.WarnContext(ctx, "admin API: refused a message that is no request", "endpoint", name, "subject", req.Subject(), "reply", req.Reply(), "reason", why)
				return
			}
			call := fn
			if traced {
				var span trace.Span
				ctx, span = tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
					trace.WithAttributes(attribute.String(tracing.AttrVerb, name), attribute.String("rpc.system", "nats_micro")))
				defer span.End()
				call = tracedEndpoint(fn, span)
			}
			ctx = auditlog.WithRequester(ctx, requesterOf(req, own))
			out, err := call(ctx, req.Data())
			if err != nil {
				respondError(ctx, req, toError(err), log, name, err)
				return
			}
			if raw, ok := out.(rawJSON); ok {
				_ = req.Respond(raw)
				return
			}
			_ = req.RespondJSON(out)
		})
		if err := g.AddEndpoint(strings.ReplaceAll(name, ".", "_"), handler, micro.WithEndpointSubject(name)); err != nil {
			cancel()
			_ = svc.Stop()
			return nil, fmt.Errorf("admin: endpoint %s: %w", name, err)
		}
	}
	// Requests to a verb that does not exist get an answer too, instead of
	// "no responders". The subscription sees every request and answers
	// only those no endpoint serves; its queue group is its own, so that
	// the endpoints' group still gets every request.
	s.unknown, err = cfg.Conn.QueueSubscribe(prefix+".>", "jetsched-unknown-verb", func(m *nats.Msg) {
		verb := strings.TrimPrefix(m.Subject, prefix+".")
		if _, ok := table[verb]; ok || unsolicited(m.Reply) != "" {
			return
		}
		e := admin.Error{Code: admin.CodeNotFound, Field: "verb", Message: fmt.Sprintf("not found: verb %q on %s.>; the verbs are in docs/api.md (or `nats micro info jetsched`)", verb, prefix)}
		reply := nats.NewMsg(m.Reply)
		reply.Header.Set(micro.ErrorCodeHeader, e.Code)
		reply.Header.Set(micro.ErrorHeader, e.Message)
		reply.Data, _ = json.Marshal(e)
		_ = m.RespondMsg(reply)
	})
	if err != nil {
		cancel()
		_ = svc.Stop()
		return nil, fmt.Errorf("admin: subscribe for unknown verbs: %w", err)
	}
	// The endpoints' subscriptions reach the server before Start returns,
	// so a request right after it finds a responder.
	if err := cfg.Conn.Flush(); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("admin: flush: %w", err)
	}
	cat.start(ctx)
	return s, nil
}

// Stop ends the context of in-flight requests (a long computation, such
// as a timer's working-time count, stops; a write under way fails),
// unregisters the service and stops the catalogue's watches, waiting for
// them to end.
func (s *Service) Stop() error {
	s.cancel()
	err := s.svc.Stop()
	if s.unknown != nil {
		_ = s.unknown.Unsubscribe()
	}
	s.cat.Stop()
	return err
}

// tracedEndpoint is fn recording its failure and the schedule it names in
// span.
func tracedEndpoint(fn endpoint, span trace.Span) endpoint {
	return func(ctx context.Context, body []byte) (any, error) {
		out, err := fn(ctx, body)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, toError(err).Code)
		}
		switch r := out.(type) {
		case admin.PutResponse:
			span.SetAttributes(attribute.String(tracing.AttrScheduleID, r.ID))
		case map[string]any: // schedule.trigger
			if id, ok := r["id"].(string); ok {
				span.SetAttributes(attribute.String(tracing.AttrScheduleID, id))
			}
		}
		return out, err
	}
}

// respondError sends an error reply and logs internal failures, with the
// request's context (its trace).
func respondError(ctx context.Context, req micro.Request, e admin.Error, log *slog.Logger, verb string, err error) {
	body, _ := json.Marshal(e)
	_ = req.Error(e.Code, e.Message, body)
	if e.Code == admin.CodeInternal {
		log.WarnContext(ctx, "admin request failed", "endpoint", verb, "err", err)
	}
}

// toError classifies an error for the wire. The message is
// kvstore.UserMessage's: what a user reads, without package prefixes.
func toError(err error) admin.Error {
	msg := usererr.Message(err)
	var fe *kvstore.FieldError
	switch {
	case errors.Is(err, kvstore.ErrAuditUnavailable):
		return admin.Error{Code: admin.CodeAuditUnavailable, Message: msg}
	case errors.Is(err, jsstore.ErrNotWritten):
		return admin.Error{Code: admin.CodeNotWritten, Message: msg}
	case errors.Is(err, kvstore.ErrStatic):
		return admin.Error{Code: admin.CodeStatic, Field: "id", Message: msg}
	case errors.As(err, &fe):
		return admin.Error{Code: admin.CodeInvalid, Field: fe.Field, Message: msg}
	case errors.Is(err, errBadRequest), errors.Is(err, kvstore.ErrInvalid):
		return admin.Error{Code: admin.CodeInvalid, Message: msg}
	case errors.Is(err, kvstore.ErrNotFound):
		return admin.Error{Code: admin.CodeNotFound, Message: msg}
	case errors.Is(err, kvstore.ErrConflict):
		return admin.Error{Code: admin.CodeConflict, Message: msg}
	case errors.Is(err, jsstore.ErrInUse):
		return admin.Error{Code: admin.CodeInUse, Message: msg}
	case errors.Is(err, errUnavailable):
		return admin.Error{Code: admin.CodeUnavailable, Message: msg}
	}
	return admin.Error{Code: admin.CodeInternal, Message: msg}
}

var (
	errBadRequest  = errors.New("admin: bad request")
	errUnavailable = errors.New("admin: unavailable")
)

// decode reads a request body strictly: a key given twice, an unknown
// field, a value of the wrong type or trailing data is refused, naming the
// field where there is one.
func decode[T any](data []byte) (T, error) {
	var v T
	if len(data) == 0 {
		return v, nil
	}
	if err := strictjson.Check(data); err != nil {
		var dup *strictjson.DuplicateKeyError
		if errors.As(err, &dup) {
			return v, &kvstore.FieldError{Field: dup.Field(), Err: dup}
		}
		return v, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	dec := json.NewDecoder(bytesReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return v, &kvstore.FieldError{Field: te.Field, Reason: "want a JSON " + te.Type.Kind().String() + ", not " + te.Value}
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return v, &kvstore.FieldError{Field: strings.Trim(name, `"`), Reason: "unknown field"}
		}
		return v, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	if dec.More() {
		return v, fmt.Errorf("%w: trailing data after the JSON object", errBadRequest)
	}
	return v, nil
}
