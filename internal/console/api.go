package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/jetsched/jetsched/internal/admin"
)

// HeaderActor names the console user on admin API requests; the audit
// trail records it (as claimed by the caller, next to the NATS user the
// server reports where the accounts make it report one).
const HeaderActor = "Sched-Actor"

// apiTimeout bounds one admin API request.
const apiTimeout = 10 * time.Second

// apiClient sends admin API requests.
type apiClient struct {
	nc     *nats.Conn
	prefix string // "<prefix>.api"
}

// apiError is an error reply of the admin API.
type apiError admin.Error

func (e *apiError) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// errNoScheduler: no scheduler answers on the admin API.
var errNoScheduler = errors.New("console: no scheduler answers the admin API (is `scheduler run` running?)")

// call sends verb with req (as actor, "" for reads) and decodes the reply
// into resp (nil: ignore it). An error reply is an *apiError.
func (c apiClient) call(ctx context.Context, actor, verb string, req, resp any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("console: encode %s: %w", verb, err)
	}
	msg := nats.NewMsg(c.prefix + "." + verb)
	msg.Data = data
	if actor != "" {
		msg.Header.Set(HeaderActor, actor)
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	reply, err := c.nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return errNoScheduler
		}
		return fmt.Errorf("console: admin API %s: %w", verb, err)
	}
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		var e admin.Error
		if json.Unmarshal(reply.Data, &e) != nil {
			e = admin.Error{Code: code, Message: reply.Header.Get(micro.ErrorHeader)}
		}
		return (*apiError)(&e)
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(reply.Data, resp); err != nil {
		return fmt.Errorf("console: admin API %s: undecodable reply: %w", verb, err)
	}
	return nil
}

// isNotFound reports an admin API not_found answer.
func isNotFound(err error) bool {
	var e *apiError
	return errors.As(err, &e) && e.Code == admin.CodeNotFound
}
