package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/tracing"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// ListOptions selects and pages schedules for List and Schedules.
type ListOptions struct {
	// Cursor is a previous page's NextCursor ("": the first page).
	Cursor string
	// Limit is the page size: 0 for admin.DefaultLimit (100), at most
	// admin.MaxLimit (1000).
	Limit int
	// Workflow, State (one of admin.States: active, paused, ended,
	// invalid, planned) and Prefix (of the key) filter; "" keeps all.
	Workflow, State, Prefix string
	// Selector keeps the schedules whose labels (WithLabels) match a
	// label selector: requirements joined by commas, each key=value,
	// key!=value, key in (v1,v2), key notin (v1,v2), key or !key
	// ("team=billing,tier!=gold"); "" keeps all. A malformed one is an
	// *APIError of code invalid naming the field selector.
	Selector string
}

// Page is one page of schedules, in key order.
type Page struct {
	Items []ScheduleInfo
	// Total counts every schedule that matches the filters.
	Total int
	// NextCursor is the Cursor of the next page; "" on the last.
	NextCursor string
}

// List returns one page of schedules in key order. It asks the admin API
// of a running scheduler (sched.api.schedule.list), so it needs the NATS
// rights on sched.api.>. An input larger than 1 KiB is left out of a
// listed schedule (named in ScheduleInfo.Omitted); Get returns it.
func (c *Client) List(ctx context.Context, opts ListOptions) (Page, error) {
	var pg admin.Page[admin.ScheduleInfo]
	req := admin.ListRequest{Cursor: opts.Cursor, Limit: opts.Limit, Workflow: opts.Workflow, State: opts.State, Prefix: opts.Prefix,
		Selector: opts.Selector}
	if err := c.call(ctx, "schedule.list", req, &pg); err != nil {
		return Page{}, err
	}
	out := Page{Items: make([]ScheduleInfo, 0, len(pg.Items)), Total: pg.Total, NextCursor: pg.NextCursor}
	for _, v := range pg.Items {
		out.Items = append(out.Items, newScheduleInfo(v))
	}
	return out, nil
}

// Schedules iterates over every schedule that matches opts (from
// opts.Cursor), in key order, fetching a page at a time, so that memory
// stays bounded however many there are. An error ends the iteration after
// it is yielded.
func (c *Client) Schedules(ctx context.Context, opts ListOptions) iter.Seq2[ScheduleInfo, error] {
	return func(yield func(ScheduleInfo, error) bool) {
		for {
			pg, err := c.List(ctx, opts)
			if err != nil {
				yield(ScheduleInfo{}, err)
				return
			}
			for _, it := range pg.Items {
				if !yield(it, nil) {
					return
				}
			}
			if pg.NextCursor == "" {
				return
			}
			opts.Cursor = pg.NextCursor
		}
	}
}

// APIError is an error reply of the admin API: its code, the field of
// invalid input, and the message. errors.Is matches kvstore.ErrInvalid,
// ErrNotFound or ErrConflict by its code.
type APIError struct {
	Code, Field, Message string
}

func (e *APIError) Error() string { return e.Message }

// Unwrap maps the code to the store's sentinel errors.
func (e *APIError) Unwrap() error {
	switch e.Code {
	case admin.CodeInvalid:
		return kvstore.ErrInvalid
	case admin.CodeNotFound:
		return ErrNotFound
	case admin.CodeConflict:
		return ErrConflict
	}
	return nil
}

// call sends an admin API request and decodes its reply into resp; an
// error reply is an *APIError. The trace context of ctx's span goes with
// it (traceparent, tracestate), when there is one.
func (c *Client) call(ctx context.Context, verb string, req, resp any) error {
	data, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("client: encode %s request: %w", verb, err)
	}
	subject := c.store.Layout().Prefix + ".api." + verb
	m := nats.NewMsg(subject)
	m.Data = data
	tracing.Inject(ctx, m.Header) // the caller's span, when it has one, parents the API's
	msg, err := c.nc.RequestMsgWithContext(ctx, m)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("client: no scheduler answers on %s (reads need a running `scheduler run`): %w", subject, err)
		}
		return fmt.Errorf("client: %s: %w", verb, err)
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		var e admin.Error
		if json.Unmarshal(msg.Data, &e) != nil {
			e = admin.Error{Code: code, Message: msg.Header.Get(micro.ErrorHeader)}
		}
		return &APIError{Code: e.Code, Field: e.Field, Message: e.Message}
	}
	if err := json.Unmarshal(msg.Data, resp); err != nil {
		return fmt.Errorf("client: %s: undecodable reply: %w", verb, err)
	}
	return nil
}
