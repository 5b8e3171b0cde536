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
