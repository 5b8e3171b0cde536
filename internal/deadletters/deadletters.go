// Package deadletters lists, reads, retries and purges dead letters: the
// copies of fires and wakeups a worker gave up on, which pkg/worker
// publishes on sched.event.dead_letter.<workflow>.<id> into the event
// stream with the original headers and body, plus Sched-Original-Subject,
// Sched-Original-Id, Sched-Deliveries and Sched-Error. The admin API's
// deadletter.* verbs (and through them the CLI and the console) use it.
//
// A retry publishes the original message again for the workflow's
// workers, with its own Nats-Msg-Id, "<original id>.retry-<dead letter
// seq>", and Sched-Retry-Of (the original id, which workers take as the
// message's id) and Sched-Dead-Letter-Seq: the same dead letter retried
// twice is published once. A fire's retry goes to
// sched.fire.<workflow>.<schedule id>.retry, which the workflow's
// consumers (sched.fire.<workflow>.>) receive and the ledger of the
// schedule's fires (sched.fire.*.<schedule id>) does not read: a retry is
// not a new slot, so the scheduler neither claims it nor waits for it,
// and the worker's report updates the original slot's ledger entry. A
// wakeup's retry goes to its original subject, sched.wakeup.<workflow>,
// which is its workers' filter. Retries and purges are written ahead in
// the audit trail as the other operator actions are.
package deadletters

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Headers pkg/worker adds to a dead letter.
const (
	HeaderOriginalSubject = "Sched-Original-Subject"
	HeaderOriginalID      = "Sched-Original-Id"
	HeaderDeliveries      = "Sched-Deliveries"
	HeaderError           = "Sched-Error"
)

// Kinds of dead letters.
const (
	KindFire   = "fire"
	KindWakeup = "wakeup"
)

// ErrNotFound: no dead letter at that sequence (never one, purged, or
// aged out of the event stream). It matches kvstore.ErrNotFound.
var ErrNotFound = fmt.Errorf("%w: dead letter", kvstore.ErrNotFound)

// Letters reads and acts on the dead letters of a store's layout.
type Letters struct {
	Store *jsstore.Store
}

// prefix is "sched.event.dead_letter" (append ".>" for every workflow).
func (d Letters) prefix() string {
	return d.Store.Layout().WithDefaults().Prefix + ".event." + string(kvstore.EventDeadLetter)
}

// filter is the subject filter of every dead letter, or of workflow's.
func (d Letters) filter(workflow string) string {
	if workflow == "" {
		return d.prefix() + ".>"
	}
	return d.prefix() + "." + workflow + ".>"
}

func (d Letters) events(ctx context.Context) (jetstream.Stream, error) {
	name := d.Store.Layout().WithDefaults().EventsStream
	s, err := d.Store.JetStream().Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("deadletters: stream %s: %w", name, err)
	}
	return s, nil
}

// Each calls fn with every dead letter (of workflow, when not ""), oldest
// first, read with their headers only, until fn returns false.
func (d Letters) Each(ctx context.Context, workflow string, fn func(admin.DeadLetter) bool) error {
	s, err := d.events(ctx)
	if err != nil {
		return err
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{d.filter(workflow)}, DeliverPolicy: jetstream.DeliverAllPolicy, HeadersOnly: true,
	})
	if err != nil {
		return fmt.Errorf("deadletters: read %s: %w", d.filter(workflow), err)
	}
	for {
		// No wait: every dead letter is stored already, so a pull that
		// waited for a full batch would only add its wait to each read
		// (a second for every listing of fewer than 256).
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return fmt.Errorf("deadletters: read %s: %w", d.filter(workflow), err)
		}
		n, last := 0, false
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil || last {
				continue
			}
			if !fn(d.letter(m.Subject(), m.Headers(), md.Sequence.Stream, md.Timestamp)) {
				last = true
			}
			if md.NumPending == 0 {
				last = true
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("deadletters: read %s: %w", d.filter(workflow), err)
		}
		if last || n == 0 {
			return nil
		}
	}
}

// List returns a page of dead letters, newest first: at most limit older
// than the sequence before (0: the newest), the count of all that match,
// and the cursor of the next page ("" on the last).
func (d Letters) List(ctx context.Context, workflow string, before uint64, limit int) (admin.Page[admin.DeadLetter], error) {
	var page admin.Page[admin.DeadLetter]
	var ring []admin.DeadLetter // the newest limit+1 before the cursor, oldest first
	err := d.Each(ctx, workflow, func(l admin.DeadLetter) bool {
		page.Total++
		if before == 0 || l.Seq < before {
			ring = append(ring, l)
			if len(ring) > limit+1 {
				ring = ring[1:]
			}
		}
		return true
	})
	if err != nil {
		return page, err
	}
	if len(ring) > limit {
		ring = ring[1:]
		page.NextCursor = strconv.FormatUint(ring[0].Seq, 10)
	}
	page.Items = make([]admin.DeadLetter, 0, len(ring))
	for i := len(ring) - 1; i >= 0; i-- {
		page.Items = append(page.Items, ring[i])
	}
	return page, nil
}

// Get returns the dead letter at seq with its headers and body, and the
// ledger entry of its slot when one is found.
func (d Letters) Get(ctx context.Context, seq uint64) (admin.DeadLetterDetail, error) {
	m, err := d.get(ctx, seq)
	if err != nil {
		return admin.DeadLetterDetail{}, err
	}
	out := admin.DeadLetterDetail{DeadLetter: d.letter(m.Subject, m.Header, m.Sequence, m.Time), Headers: m.Header, Body: m.Data}
	if out.Body == nil {
		out.Body = []byte{}
	}
	if out.Kind == KindFire && out.ID != "" {
		if t, err := d.Store.SlotEntry(ctx, out.ID); err == nil {
			out.Ledger = &t
		}
	}
	return out, nil
}

// get reads the message at seq, ErrNotFound unless it is a dead letter.
func (d Letters) get(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, error) {
	if seq == 0 {
		return nil, &kvstore.FieldError{Field: "seq", Value: "0", Reason: "want the dead letter's sequence (deadletter ls shows it)"}
	}
	s, err := d.events(ctx)
	if err != nil {
		return nil, err
	}
	m, err := s.GetMsg(ctx, seq)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil, fmt.Errorf("%w %d: none in %s (purged, aged out, or never one)", ErrNotFound, seq, d.Store.Layout().WithDefaults().EventsStream)
	case err != nil:
		return nil, fmt.Errorf("deadletters: read %d: %w", seq, err)
	case !strings.HasPrefix(m.Subject, d.prefix()+"."):
		return nil, fmt.Errorf("%w %d: message %d of %s is %s, not a dead letter", ErrNotFound, seq, seq, d.Store.Layout().WithDefaults().EventsStream, m.Subject)
	}
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	return m, nil
}

// letter reads a dead letter's subject and headers.
func (d Letters) letter(subject string, h nats.Header, seq uint64, at time.Time) admin.DeadLetter {
	l := admin.DeadLetter{Seq: seq, At: at.UTC(), Subject: h.Get(HeaderOriginalSubject), ID: h.Get(HeaderOriginalID),
		Reason: h.Get(HeaderError), Schedule: h.Get(kvstore.HeaderScheduleID), Run: h.Get(kvstore.HeaderRun), Step: h.Get(kvstore.HeaderStep)}
	l.Workflow, _, _ = strings.Cut(strings.TrimPrefix(subject, d.prefix()+"."), ".")
	l.Deliveries, _ = strconv.Atoi(h.Get(HeaderDeliveries))
	l.RetryOf, _ = strconv.ParseUint(h.Get(kvstore.HeaderDeadLetterSeq), 10, 64)
	l.Kind = KindFire
	due := h.Get(kvstore.HeaderScheduledAt)
	if l.Schedule == "" {
		l.Kind, due = KindWakeup, h.Get(kvstore.HeaderDueAt)
	}
	if t, err := time.Parse(time.RFC3339Nano, due); err == nil {
		l.Slot = t
	}
	l.ID = cmp.Or(l.ID, h.Get(kvstore.HeaderRetryOf))
	return l
}
