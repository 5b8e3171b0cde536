package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// apiTimeout bounds one admin API request.
const apiTimeout = 30 * time.Second

// HeaderActor names the operator on admin API requests (recorded in the
// audit trail as claimed by the client).
const HeaderActor = "Sched-Actor"

// call sends an admin API request (sched.api.<endpoint>) and decodes the
// response into resp (nil: ignore it). The CLI operates the fleet only
// through the API, so an operator needs NATS rights on sched.api.> alone.
func (a *app) call(ctx context.Context, endpoint string, req, resp any) error {
	data := []byte("{}")
	if req != nil {
		var err error
		if data, err = json.Marshal(req); err != nil {
			return err
		}
	}
	if a.apiConn != nil {
		return a.request(ctx, a.apiConn, endpoint, data, resp)
	}
	nc, err := a.connectAPI()
	if err != nil {
		return err
	}
	defer nc.Close()
	return a.request(ctx, nc, endpoint, data, resp)
}

// connectAPI checks the connection flags and connects for admin API
// requests.
func (a *app) connectAPI() (*nats.Conn, error) {
	if err := a.conn.Validate(); err != nil {
		return nil, usageError{err}
	}
	if err := kvstore.ValidatePrefix(a.namePrefix); err != nil {
		return nil, usageError{err}
	}
	conn := a.conn
	conn.Name = "jetsched cli"
	return natsconn.Connect(conn)
}

// request sends the admin API request data on nc and decodes the
// response into resp (nil: ignore it).
func (a *app) request(ctx context.Context, nc *nats.Conn, endpoint string, data []byte, resp any) error {
	if max := nc.MaxPayload(); max > 0 && int64(len(data)) > max {
		return usageError{fmt.Errorf("the request is %d bytes, over the NATS server's max payload of %d: a value is too large", len(data), max)}
	}
	msg := nats.NewMsg(a.namePrefix + ".api." + endpoint)
	msg.Data = data
	msg.Header.Set(HeaderActor, cliActor())
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	reply, err := nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("no scheduler answers on %s.api.%s: is `scheduler run` running on %s?", a.namePrefix, endpoint, natsconn.ConnectedURL(nc))
		}
		return fmt.Errorf("admin API %s: %w", endpoint, err)
	}
	if code := reply.Header.Get("Nats-Service-Error-Code"); code != "" {
		var e admin.Error
		if json.Unmarshal(reply.Data, &e) != nil {
			e = admin.Error{Code: code, Message: reply.Header.Get("Nats-Service-Error")}
		}
		e.Message += a.calendarHint(ctx, nc, e)
		return apiError(e)
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(reply.Data, resp); err != nil {
		return fmt.Errorf("admin API %s: undecodable response: %w", endpoint, err)
	}
	return nil
}

// conflictError is an admin API conflict answer (exit status 3).
type conflictError struct{ msg string }

func (e conflictError) Error() string { return e.msg }

// apiError turns an admin API error into the CLI's, keeping the API's
// message (kvstore.UserMessage's, so the CLI and the API say one mistake
// alike): invalid input names its flag and exits 2, as does a static
// schedule; a conflict exits 3; not found and the rest exit 1.
func apiError(e admin.Error) error {
	switch e.Code {
	case admin.CodeNotFound:
		return &fieldcheck.UserError{Kind: kvstore.ErrNotFound, Msg: e.Message}
	case admin.CodeConflict:
		return conflictError{e.Message}
	case admin.CodeStatic:
		return usageError{&fieldcheck.UserError{Kind: kvstore.ErrStatic, Msg: e.Message}}
	case admin.CodeInUse:
		return &fieldcheck.UserError{Kind: jsstore.ErrInUse, Msg: e.Message}
	case admin.CodeInvalid:
		return usageError{errors.New(flagMessage(e.Field, e.Message))}
	}
	return errors.New(e.Message)
}
