package deadletters

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Audit actions of the trail.
const (
	ActionRetry = "deadletter.retry"
	ActionPurge = "deadletter.purge"
)

// Check refuses an action request that names neither one dead letter nor
// all (of a workflow), or both, with a *kvstore.FieldError.
func Check(r admin.DeadLetterActionRequest) error {
	switch {
	case r.Seq != 0 && (r.All || r.Workflow != ""):
		return &kvstore.FieldError{Field: "seq", Value: strconv.FormatUint(r.Seq, 10), Reason: "names one dead letter: give either seq, or all (with a workflow or not)"}
	case r.Seq == 0 && !r.All:
		return &kvstore.FieldError{Field: "all", Reason: "give the sequence of one dead letter, or all: true (with a workflow to keep to one)"}
	case r.Workflow != "":
		if err := kvstore.ValidateWorkflow(r.Workflow); err != nil {
			return err
		}
	}
	if !r.Before.IsZero() && !kvstore.InTimeRange(r.Before) {
		return &kvstore.FieldError{Field: "before", Value: r.Before.Format(time.RFC3339), Reason: "outside the supported time range " + fieldcheck.TimeRange}
	}
	return nil
}

// chosen returns the sequences r names, at most max, and whether more
// matched. One named sequence must be a dead letter (ErrNotFound).
func (d Letters) chosen(ctx context.Context, r admin.DeadLetterActionRequest, max int) ([]uint64, bool, error) {
	if r.Seq != 0 {
		m, err := d.get(ctx, r.Seq)
		if err != nil {
			return nil, false, err
		}
		if !r.Before.IsZero() && !m.Time.Before(r.Before) {
			return nil, false, nil
		}
		return []uint64{r.Seq}, false, nil
	}
	var seqs []uint64
	more := false
	err := d.Each(ctx, r.Workflow, func(l admin.DeadLetter) bool {
		if !r.Before.IsZero() && !l.At.Before(r.Before) {
			return false // stored in order: the rest are newer
		}
		if len(seqs) == max {
			more = true
			return false
		}
		seqs = append(seqs, l.Seq)
		return true
	})
	return seqs, more, err
}

// Retry publishes the dead letters r names again (see the package doc),
// each after its intent in the audit trail.
func (d Letters) Retry(ctx context.Context, r admin.DeadLetterActionRequest) (admin.DeadLetterRetryReply, error) {
	out := admin.DeadLetterRetryReply{Retried: []admin.DeadLetterRetried{}}
	if err := Check(r); err != nil {
		return out, err
	}
	if !r.Before.IsZero() {
		return out, &kvstore.FieldError{Field: "before", Reason: "applies to deadletter.purge only"}
	}
	seqs, _, err := d.chosen(ctx, r, admin.MaxDeadLetterPurge)
	if err != nil {
		return out, err
	}
	for _, seq := range seqs {
		res, err := d.retry(ctx, seq)
		if err != nil {
			return out, fmt.Errorf("retry dead letter %d: %w", seq, err)
		}
		out.Retried = append(out.Retried, res)
	}
	return out, nil
}

// retry publishes the dead letter at seq again, once.
func (d Letters) retry(ctx context.Context, seq uint64) (admin.DeadLetterRetried, error) {
	m, err := d.get(ctx, seq)
	if err != nil {
		return admin.DeadLetterRetried{}, err
	}
	l := d.letter(m.Subject, m.Header, m.Sequence, m.Time)
	if l.ID == "" || l.Subject == "" {
		return admin.DeadLetterRetried{}, fmt.Errorf("%w: dead letter %d has no %s or %s header: not one a worker wrote", kvstore.ErrInvalid, seq, HeaderOriginalID, HeaderOriginalSubject)
	}
	lay := d.Store.Layout().WithDefaults()
	stream, subject := lay.FiresStream, lay.FireSubject(l.Workflow, l.Schedule)+".retry"
	if l.Kind == KindWakeup {
		stream, subject = lay.WakeupsStream, lay.WakeupSubject(l.Workflow)
	}
	res := admin.DeadLetterRetried{Seq: seq, Subject: subject, MsgID: l.ID + ".retry-" + strconv.FormatUint(seq, 10)}
	// The stream drops a second publish of the same id within its
	// duplicate window; past it, the stream itself says whether the retry
	// is there.
	if done, err := d.published(ctx, stream, subject, res.MsgID, m.Time); err != nil || done {
		res.Duplicate = done
		return res, err
	}
	msg := nats.NewMsg(subject)
	for k, v := range m.Header {
		switch k {
		case HeaderOriginalSubject, HeaderOriginalID, HeaderDeliveries, HeaderError, kvstore.AuditSeqHeader:
		default:
			msg.Header[k] = v
		}
	}
	msg.Header.Set(nats.MsgIdHdr, res.MsgID)
	msg.Header.Set(kvstore.HeaderRetryOf, l.ID)
	msg.Header.Set(kvstore.HeaderDeadLetterSeq, strconv.FormatUint(seq, 10))
	msg.Data = m.Data
	in := jsstore.Intent{Action: ActionRetry, Target: strconv.FormatUint(seq, 10), Detail: map[string]any{
		"workflow": l.Workflow, "kind": l.Kind, "id": l.ID, "subject": subject, "msg_id": res.MsgID}}
	err = d.Store.WriteAhead(ctx, in, func(mark jsstore.AuditMark) error {
		if mark != 0 {
			msg.Header.Set(kvstore.AuditSeqHeader, strconv.FormatUint(uint64(mark), 10))
		}
		ack, err := d.Store.JetStream().PublishMsg(ctx, msg)
		if err != nil {
			return fmt.Errorf("publish %s: %w", subject, err)
		}
		res.Duplicate = ack.Duplicate
		return nil
	})
	return res, err
}

// published reports whether a message with id msgID is on subject in
// stream, stored at or after since (a retry is published after its dead
// letter).
func (d Letters) published(ctx context.Context, stream, subject, msgID string, since time.Time) (bool, error) {
	s, err := d.Store.JetStream().Stream(ctx, stream)
	if err != nil {
		return false, fmt.Errorf("stream %s: %w", stream, err)
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &since, HeadersOnly: true,
	})
	if err != nil {
		return false, fmt.Errorf("look for %s on %s: %w", msgID, subject, err)
	}
	for {
		batch, err := cons.Fetch(256, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return false, fmt.Errorf("look for %s on %s: %w", msgID, subject, err)
		}
		n, found, last := 0, false, false
		for m := range batch.Messages() { // read to the end: the fetch stops then
			n++
			found = found || m.Headers().Get(nats.MsgIdHdr) == msgID
			if md, err := m.Metadata(); err == nil && md.NumPending == 0 {
				last = true
			}
		}
		if found || last || n == 0 {
			return found, nil
		}
	}
}

// Purge deletes the dead letters r names from the event stream (at most
// admin.MaxDeadLetterPurge; More says whether others matched), after one
// intent in the audit trail that lists them.
func (d Letters) Purge(ctx context.Context, r admin.DeadLetterActionRequest) (admin.DeadLetterPurgeReply, error) {
	out := admin.DeadLetterPurgeReply{Purged: []uint64{}}
	if err := Check(r); err != nil {
		return out, err
	}
	seqs, more, err := d.chosen(ctx, r, admin.MaxDeadLetterPurge)
	if err != nil || len(seqs) == 0 {
		return out, err
	}
	s, err := d.events(ctx)
	if err != nil {
		return out, err
	}
	target := "all"
	if r.Seq != 0 {
		target = strconv.FormatUint(r.Seq, 10)
	} else if r.Workflow != "" {
		target = r.Workflow
	}
	in := jsstore.Intent{Action: ActionPurge, Target: target, Detail: map[string]any{"seqs": seqs, "workflow": r.Workflow, "before": r.Before}}
	err = d.Store.WriteAhead(ctx, in, func(jsstore.AuditMark) error {
		for _, seq := range seqs {
			if err := s.DeleteMsg(ctx, seq); err != nil && !strings.Contains(err.Error(), "no message found") {
				if len(out.Purged) > 0 {
					// Some are gone: the intent stands for them.
					return nil
				}
				return fmt.Errorf("delete dead letter %d: %w", seq, err)
			}
			out.Purged = append(out.Purged, seq)
		}
		return nil
	})
	out.More = more
	if err == nil && len(out.Purged) < len(seqs) {
		err = fmt.Errorf("deadletters: purged %d of %d dead letters; ask again for the rest", len(out.Purged), len(seqs))
	}
	return out, err
}
