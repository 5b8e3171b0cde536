package wakeup

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Request registers a timer. Exactly one of When, WhenExpr, At and
// Compute gives the due time; the forms When may take are in
// docs/timers.md ("48 whours", "02:00", "2026-12-31 23:59", "1h30m").
type Request = wakeups.Request

// Filter selects the timers List returns: those of a run, of a workflow,
// or (zero) all.
type Filter = wakeups.Filter

// Meta is what a wakeup message's headers say: its id, run, step,
// workflow, condition (and condition key), the form it was registered
// with, why it was sent, and its re-arm count.
type Meta = wakeups.Meta

// ParseMeta reads the headers of a wakeup message.
func ParseMeta(h nats.Header) (Meta, error) { return wakeups.ParseMeta(h) }

// Outcomes of Cancel.
const (
	// OutcomeCancelled: the timer was removed before any scheduler
	// claimed it.
	OutcomeCancelled = wakeups.OutcomeCancelled
	// OutcomeFired: a scheduler had already claimed the timer; the cancel
	// lost the race. It is being fired, or, when its condition key no
	// longer holds, dropped as stale: the ledger says which.
	OutcomeFired = wakeups.OutcomeFired
)

// Auditor writes the audit trail ahead of a client's changes
// (the scheduler's audit log is one): Intend before a change, Abandon, best effort, when
// a change whose intent was appended was then not made.
type Auditor interface {
	Intend(ctx context.Context, in kvstore.Intent) (uint64, error)
	Abandon(ctx context.Context, seqs []uint64, reason string) error
}

// Option configures NewClient.
type Option func(*options)

type options struct {
	layout  kvstore.Layout
	auditor Auditor
}

// WithLayout names the buckets and streams (kvstore.Layout; empty names
// take their defaults, as scheduler setup created them).
func WithLayout(l kvstore.Layout) Option { return func(o *options) { o.layout = l } }

// WithAuditor writes the audit trail ahead of every registration, cancel
// and re-arm (docs/timers.md, "audit"); without it, the trail's holder
// records the client's writes as external changes.
func WithAuditor(a Auditor) Option { return func(o *options) { o.auditor = a } }

// Client registers, cancels and lists timers. It is safe for concurrent
// use.
type Client struct{ c wakeups.Client }

// NewClient binds a client to the timers bucket of js, which scheduler
// setup must have created.
func NewClient(ctx context.Context, js jetstream.JetStream, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	st, err := jsstore.Open(ctx, js, o.layout)
	if err != nil {
		return nil, fmt.Errorf("wakeup: open the buckets: %w", err)
	}
	if o.auditor != nil {
		st.SetAuditor(o.auditor)
	}
	return &Client{c: wakeups.Client{Store: st}}, nil
}

// Register validates r, computes its due time and stores the timer,
// replacing one pending under the same (run, step). Errors are
// *kvstore.FieldError naming the field; nothing is stored on error.
func (c *Client) Register(ctx context.Context, r Request) (kvstore.TimerEntry, error) {
	return c.c.Register(ctx, r)
}

// Cancel removes the timer (run, step) by compare-and-swap and says
// OutcomeCancelled, or OutcomeFired when a scheduler claimed it first.
// kvstore.ErrNotFound: no such timer.
func (c *Client) Cancel(ctx context.Context, run, step string) (string, error) {
	return c.c.Cancel(ctx, run, step)
}

// CancelRun cancels every pending timer of run and says how many it
// removed.
func (c *Client) CancelRun(ctx context.Context, run string) (int, error) {
	return c.c.CancelRun(ctx, run)
}

// List returns the pending timers of a run, of a workflow, or all.
func (c *Client) List(ctx context.Context, f Filter) ([]kvstore.TimerEntry, error) {
	return c.c.List(ctx, f)
}

// Rearm answers a wakeup with "not ready, retry at": it registers the
// timer again for at, with the message's workflow, condition (and
// condition key) and payload.
func (c *Client) Rearm(ctx context.Context, m Meta, payload []byte, at time.Time) (kvstore.TimerEntry, error) {
	return c.c.Rearm(ctx, m, payload, at)
}
