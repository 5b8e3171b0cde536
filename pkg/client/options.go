package client

import (
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// ClientOption configures New. Options are validated there: a bad one
// makes New return its error.
type ClientOption func(*clientOptions) error

type clientOptions struct {
	layout    kvstore.Layout
	layoutSet string // the option that set layout, for conflicts
	domain    string
	// specTraces: see WithSpecTraces.
	specTraces bool
}

// WithNamePrefix binds to the layout `scheduler run --name-prefix prefix`
// uses: buckets <prefix>_specs, ..., streams <PREFIX>_FIRES, ..., subjects
// <prefix>.fire.<workflow>, <prefix>.api.> (kvstore.NamedLayout). The
// prefix is letters, digits, '_' and '-'.
func WithNamePrefix(prefix string) ClientOption {
	return func(o *clientOptions) error {
		if err := kvstore.ValidatePrefix(prefix); err != nil {
			return fmt.Errorf("client: WithNamePrefix: %w", err)
		}
		return o.setLayout("WithNamePrefix", kvstore.NamedLayout(prefix))
	}
}

// WithLayout binds to a layout whose names were chosen one by one
// (kvstore.Layout; empty names take their defaults).
func WithLayout(l kvstore.Layout) ClientOption {
	return func(o *clientOptions) error { return o.setLayout("WithLayout", l) }
}

func (o *clientOptions) setLayout(by string, l kvstore.Layout) error {
	if o.layoutSet != "" && o.layoutSet != by {
		return fmt.Errorf("client: %s and %s both choose the layout: give one", o.layoutSet, by)
	}
	o.layout, o.layoutSet = l, by
	return nil
}

// WithSpecTraces keeps the trace context of the caller's span (Schedule's
// ctx) in each schedule it writes, so that every fire's dispatch span links
// to the call that created the schedule (docs/tracing.md). Only with
// schedulers that read the spec's trace field (this release on): an older
// scheduler refuses a spec with a field it does not know.
func WithSpecTraces() ClientOption {
	return func(o *clientOptions) error {
		o.specTraces = true
		return nil
	}
}

// WithDomain reaches the buckets through the JetStream domain domain (a
// leaf node's JetStream, say): New binds a JetStream with
// jetstream.NewWithDomain on the connection of the one passed in. A
// JetStream already made with NewWithDomain needs no option; with one, the
// domains must agree. Admin API requests (List) are core NATS and take no
// domain.
func WithDomain(domain string) ClientOption {
	return func(o *clientOptions) error {
		if domain == "" {
			return errors.New("client: WithDomain: the domain must not be empty")
		}
		o.domain = domain
		return nil
	}
}

// inDomain returns js bound to the options' domain.
func (o *clientOptions) inDomain(js jetstream.JetStream) (jetstream.JetStream, error) {
	bound, err := jsname.InDomain(js, o.domain)
	if err != nil {
		return nil, fmt.Errorf("client: WithDomain(%q): %w", o.domain, err)
	}
	return bound, nil
}

// MisfirePolicy is what happens to slots that fell due while no scheduler
// could fire them (WithMisfire; docs/records.md).
type MisfirePolicy = kvstore.MisfirePolicy

// Misfire policies.
const (
	// MisfireSkip records the missed slots and fires at the next one (the
	// default).
	MisfireSkip = kvstore.MisfireSkip
	// MisfireFireOnce fires one catch-up for the missed slots.
	MisfireFireOnce = kvstore.MisfireFireOnce
	// MisfireFireAll fires every missed slot, in order.
	MisfireFireAll = kvstore.MisfireFireAll
)

// OverlapPolicy is what happens when a slot comes due while the previous
// fire has not reported its completion (WithOverlap; docs/protocol.md).
type OverlapPolicy = kvstore.OverlapPolicy

// Overlap policies.
const (
	// OverlapAllow fires regardless (the default).
	OverlapAllow = kvstore.OverlapAllow
	// OverlapSkip records the new slot skipped.
	OverlapSkip = kvstore.OverlapSkip
	// OverlapBufferOne fires one buffered slot once the previous is done.
	OverlapBufferOne = kvstore.OverlapBufferOne
	// OverlapBufferAll fires every buffered slot, one after the other.
	OverlapBufferAll = kvstore.OverlapBufferAll
	// OverlapCancelOther asks the workers to cancel the running slot
	// (pkg/worker ends its handler's context) and fires the new one.
	OverlapCancelOther = kvstore.OverlapCancelOther
)

// HolidayRoll is what a calendar does with an occurrence on a holiday
// (WithCalendar; docs/calendar.md).
type HolidayRoll string

// Holiday rolls.
const (
	RollSkip                HolidayRoll = "skip"
	RollNextBusinessDay     HolidayRoll = "next_business_day"
	RollPreviousBusinessDay HolidayRoll = "previous_business_day"
	RollModifiedFollowing   HolidayRoll = "modified_following"
)

// DomDowRule is how a Cron recurrence combines its day-of-month and
// day-of-week fields (WithDomDow; docs/cron.md).
type DomDowRule string

// Day rules.
const (
	// DomDowCronie: as Linux cron, a field starting with '*' is
	// unrestricted, and two restricted fields match on either (the
	// default).
	DomDowCronie DomDowRule = "cronie"
	// DomDowPosix: only a bare '*' or '?' is unrestricted (robfig/cron,
	// croniter).
	DomDowPosix DomDowRule = "posix"
	// DomDowAnd: a day must match both ("0 0 13 * FRI" is Friday the 13th).
	DomDowAnd DomDowRule = "and"
)
