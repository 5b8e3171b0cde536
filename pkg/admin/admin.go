// Package admin is jetsched's admin API: a NATS micro service on
// sched.api.> ("jetsched", discoverable with `nats micro ls`) that every
// scheduler process runs, so that a remote fleet is operated with a NATS
// connection and the rights on sched.api.> alone. Requests and responses
// are JSON (docs/api.md); errors carry a code and, for invalid input, the
// field.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// Version is the admin API's version, reported by `nats micro info`.
const Version = "1.0.0"

// Error is the body of an error response (also in the Nats-Service-Error
// headers): a code, a message, and the field for invalid input.
type Error struct {
	Code    string `json:"code"` // "invalid", "not_found", "in_use", "internal"
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Service is a running admin API.
type Service struct {
	svc micro.Service
}

// Start registers the service on nc. timeout bounds each request.
func Start(nc *nats.Conn, store *kvstore.Store, log *slog.Logger, timeout time.Duration) (*Service, error) {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	svc, err := micro.AddService(nc, micro.Config{
		Name: "jetsched", Version: Version,
		Description: "jetsched admin API: schedules, calendars, timers, status, history",
	})
	if err != nil {
		return nil, fmt.Errorf("admin: add service: %w", err)
	}
	h := handlers{store: store, control: fire.Control{Store: store}, timers: wakeup.Client{Store: store}}
	g := svc.AddGroup(store.Layout().Prefix + ".api")
	for name, fn := range h.table() {
		handler := micro.HandlerFunc(func(req micro.Request) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			ctx = audit.WithActor(ctx, req.Headers().Get("Sched-Actor"))
			out, err := fn(ctx, req.Data())
			if err != nil {
				e := toError(err)
				body, _ := json.Marshal(e)
				_ = req.Error(e.Code, e.Message, body)
				if log != nil && e.Code == "internal" {
					log.Warn("admin request failed", "endpoint", name, "err", err)
				}
				return
			}
			_ = req.RespondJSON(out)
		})
		if err := g.AddEndpoint(strings.ReplaceAll(name, ".", "_"), handler, micro.WithEndpointSubject(name)); err != nil {
			_ = svc.Stop()
			return nil, fmt.Errorf("admin: endpoint %s: %w", name, err)
		}
	}
	// The endpoints' subscriptions reach the server before Start returns,
	// so a request right after it finds a responder.
	if err := nc.Flush(); err != nil {
		_ = svc.Stop()
		return nil, fmt.Errorf("admin: flush: %w", err)
	}
	return &Service{svc: svc}, nil
}

// Stop unregisters the service (in-flight requests finish).
func (s *Service) Stop() error { return s.svc.Stop() }

// toError classifies an error for the wire.
func toError(err error) Error {
	var fe *kvstore.FieldError
	switch {
	case errors.As(err, &fe):
		return Error{Code: "invalid", Field: fe.Field, Message: err.Error()}
	case errors.Is(err, errBadRequest), errors.Is(err, kvstore.ErrInvalid):
		return Error{Code: "invalid", Message: err.Error()}
	case errors.Is(err, kvstore.ErrNotFound):
		return Error{Code: "not_found", Message: err.Error()}
	case errors.Is(err, kvstore.ErrInUse):
		return Error{Code: "in_use", Message: err.Error()}
	}
	return Error{Code: "internal", Message: err.Error()}
}

var errBadRequest = errors.New("admin: bad request")

// decode reads a request body strictly.
func decode[T any](data []byte) (T, error) {
	var v T
	if len(data) == 0 {
		return v, nil
	}
	dec := json.NewDecoder(bytesReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	return v, nil
}
