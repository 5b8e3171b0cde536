package fires

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Step is a point in the fire protocol, or a decision the engine took,
// reported to Config.StepHook: fault tests crash a process at a step, and
// tests wait for a step instead of reading the log.
type Step string

// Steps of the fire protocol (JETSCHED_CRASH_AT names them).
const (
	StepBeforeClaim  Step = "before-claim"
	StepAfterClaim   Step = "after-claim"
	StepAfterPublish Step = "after-publish"
	StepAfterLedger  Step = "after-ledger"
)

// Decisions on the way: a fire's publish was not acknowledged and is sent
// again; a completion report was refused (its subject names another
// workflow), ignored (malformed), or read from the deprecated subject.
const (
	StepRepublish     Step = "republish"
	StepReportRefused Step = "report-refused"
	StepReportIgnored Step = "report-ignored"
	StepReportLegacy  Step = "report-legacy"
	// StepClaimSettled: a claim this instance did not settle was found
	// settled, its slot in the fire stream or the ledger.
	StepClaimSettled Step = "claim-settled"
	// StepOutcomeUnknown: an unsettled claim older than the fire stream's
	// retention was settled without publishing (see beyondEvidence).
	StepOutcomeUnknown Step = "outcome-unknown"
	// StepGuardClosed: a job reached a write after its shard's lease
	// guard closed (90% of the TTL without a renewal) and stopped
	// without writing.
	StepGuardClosed Step = "guard-closed"
)

func (e *Engine) step(s Step) {
	if e.cfg.StepHook != nil {
		e.cfg.StepHook(s)
	}
}

// publishBudget is how long a takeover may keep retrying its publish: up to
// its own claim's expiry. The fire stream's duplicate window must cover the
// original claim's TTL plus this budget.
func publishBudget(claimTTL time.Duration) time.Duration { return claimTTL }

// natsRetry is the backoff of a NATS write retried until ctx ends:
// exponential from 20ms to 1s, with jitter.
func natsRetry(ctx context.Context) backoff.BackOffContext { return pipeline.Backoff(ctx) }

// dispatch publishes a freshly claimed slot through the claim pipeline:
// without waiting for the stream's acknowledgement, the in-flight tracker
// records the tick and tells the loop the claim is settled (settled is
// true only when the pipeline had to publish at once and settled it).
func (e *Engine) dispatch(ctx context.Context, j slotJob, c kvstore.Claim) (settled bool, err error) {
	if c.Cancel != "" {
		e.publishCancel(j, c)
	}
	msg, now, span := e.fireMsg(j, c, "")
	settled, err = e.pub.Send(ctx, pipeline.Message{Msg: msg, ID: c.ID(j.id), Claim: c,
		Published: func(ctx context.Context, ack *jetstream.PubAck) error {
			// The stream is the ledger: the acknowledged fire settles the
			// claim, with no ledger entry of its own.
			endSpan(span, ack, nil)
			e.published(j, c, "", now, ack)
			e.step(StepAfterPublish)
			e.step(StepAfterLedger)
			e.notifySettled(j.id, c.Token, ack.Duplicate)
			return nil
		},
		Failed: func(ctx context.Context, err error) error {
			endSpan(span, nil, err)
			if ferr := e.failSlot(ctx, j, c, err); ferr != nil {
				return ferr
			}
			e.notifySettled(j.id, c.Token, false)
			return nil
		},
		Abandoned: func(err error) { endSpan(span, nil, err) },
	})
	if err != nil && !settled {
		endSpan(span, nil, err) // neither callback ran
	}
	return settled, err
}

// publishCancel asks the workers of a running slot to stop it (overlap policy
// cancel_other): a core message on sched.cancel.<workflow>.<schedule id>,
// the workflow first so that workers' permissions can be scoped to their
// workflows. Workers that cannot cancel ignore it.
func (e *Engine) publishCancel(j slotJob, c kvstore.Claim) {
	data, _ := json.Marshal(kvstore.CancelRequest{Schedule: j.id, SlotID: c.Cancel, By: c.ID(j.id), At: c.At})
	subj := e.store.Layout().CancelSubject(j.workflow, j.id)
	if err := e.store.JetStream().Conn().Publish(subj, data); err != nil {
		e.log.Warn("publish cancel", "subject", subj, "err", err)
	}
}

// dispatchTakeover re-publishes the slot of an expired, unsettled claim
// under a new claim (checkClaim found it in neither the fire stream nor
// the ledger). Inside the duplicate window the stream drops the
// re-publish if the first one had landed. After it, the fires published
// on the workflow-only subject form while the old claim was live are searched
// first: a scheduler from before the per-schedule subjects may have
// published the slot and died before its ledger entry.
func (e *Engine) dispatchTakeover(ctx context.Context, j slotJob, old, c kvstore.Claim) error {
	slotID := old.ID(j.id)
	if e.cfg.Clock.Now().Add(e.cfg.ClaimTTL).Sub(old.At) > e.dupWindow*9/10 {
		found, err := e.findLegacyFire(ctx, j.workflow, slotID, old)
		if err != nil {
			return err
		}
		if found {
			return nil
		}
	}
	_, err := e.publish(ctx, j, c, kvstore.ReasonTakeover)
	if permanent(err) {
		return e.failSlot(ctx, j, c, err)
	}
	if err != nil {
		return err
	}
	e.step(StepAfterPublish)
	e.step(StepAfterLedger)
	return nil
}

// publish sends the fire message of claim c, retrying with backoff until
// shortly before the claim expires.
func (e *Engine) publish(ctx context.Context, j slotJob, c kvstore.Claim, reason string) (*jetstream.PubAck, error) {
	msg, now, span := e.fireMsg(j, c, reason)
	ack, err := e.pub.Publish(ctx, msg, c.ID(j.id), c)
	endSpan(span, ack, err)
	if err != nil {
		return nil, err
	}
	e.published(j, c, reason, now, ack)
	return ack, nil
}

// fireMsg is the fire message of claim c, dispatched now, and its dispatch
// span (see dispatchSpan), which the caller ends with the publish's
// outcome (endSpan).
func (e *Engine) fireMsg(j slotJob, c kvstore.Claim, reason string) (*nats.Msg, time.Time, trace.Span) {
	h := fireHeader{h: nats.Header{}, vals: make([]string, 0, fireHeaders)}
	msg := &nats.Msg{Subject: e.store.Layout().FireSubject(j.workflow, j.id), Header: h.h, Data: j.input}
	now := e.cfg.Clock.Now()
	h.set(kvstore.HeaderScheduleID, j.id)
	h.set(kvstore.HeaderWorkflow, j.workflow)
	loc := j.compiled.Location
	h.set(kvstore.HeaderScheduledAt, c.Slot.In(loc).Format(time.RFC3339Nano))
	h.set(kvstore.HeaderDispatchedAt, now.UTC().Format(time.RFC3339Nano))
	h.set(kvstore.HeaderInstance, e.cfg.Instance)
	if reason == "" {
		reason = c.Reason
	}
	if reason != "" {
		h.set(kvstore.HeaderReason, reason)
	}
	if c.Note != "" {
		h.set(kvstore.HeaderNote, headerNote(c.Note))
	}
	if !c.Nominal.IsZero() {
		h.set(kvstore.HeaderNominalAt, c.Nominal.In(loc).Format(time.RFC3339Nano))
	}
	if jitter := j.compiled.policy().Jitter; jitter > 0 && c.SlotID == "" {
		h.set(kvstore.HeaderJitter, compile.JitterOffset(j.id, c.Slot, jitter).String())
	}
	if len(e.cfg.FireKey) > 0 {
		h.set(audit.SignatureHeader, audit.SignFire(e.cfg.FireKey, msg.Subject, c.ID(j.id), msg.Header.Get(kvstore.HeaderScheduledAt), msg.Data))
	}
	return msg, now, e.dispatchSpan(j, c, reason, now, msg.Header)
}

// fireHeaders is room for every value fireMsg sets: five on each fire,
// and a reason, a note, a nominal time, a jitter and a signature when it
// has them.
// (Nats-Msg-Id, which sendFires adds, is set the usual way.) The map itself is not sized: a Go map made for more
// than 8 entries allocates a full table, which cost a herd 0.29 s of CPU
// per 100,000 fires; a plain window fire has 7 headers.
const fireHeaders = 10

// fireHeader builds a fire message's header with its values in one
// slice: nats.Header.Set allocates a slice for each, seven on every
// fire of a herd.
type fireHeader struct {
	h    nats.Header
	vals []string
}

// set sets key to the single value v.
func (f *fireHeader) set(key, v string) {
	f.vals = append(f.vals, v)
	n := len(f.vals)
	f.h[key] = f.vals[n-1 : n : n]
}

// published makes the observations of a fire the stream acknowledged
// with ack: metrics, and the moved and fired events. A duplicate ack (the
// stream had the slot already) is no fire: no fired event.
func (e *Engine) published(j slotJob, c kvstore.Claim, reason string, now time.Time, ack *jetstream.PubAck) {
	if reason == "" {
		reason = c.Reason
	}
	e.cfg.Observer.Fired(j.workflow, now.Sub(c.Slot), reason)
	if e.cfg.LogFires && ack != nil && !ack.Duplicate {
		e.log.Info("fired", "schedule", j.id, "workflow", j.workflow, "slot", c.Slot.UTC(), "lateness", now.Sub(c.Slot), "reason", reason)
	}
	if c.Reason == kvstore.ReasonMoved && reason == kvstore.ReasonMoved {
		e.event(kvstore.Event{Kind: kvstore.EventMoved, Schedule: j.id, Slot: c.Slot, Reason: c.Note, Owner: e.cfg.Instance, At: now.UTC()})
	}
	if ack != nil && !ack.Duplicate && e.cfg.Events.Has(kvstore.EventFired) {
		e.event(kvstore.Event{Kind: kvstore.EventFired, Schedule: j.id, Slot: c.Slot.UTC(), SlotID: c.ID(j.id), Workflow: j.workflow,
			ScheduledAt: c.Slot.In(j.compiled.Location), DispatchedAt: now.UTC(), Stream: ack.Stream, Seq: ack.Sequence,
			Reason: reason, Owner: e.cfg.Instance, At: e.cfg.Clock.Now().UTC()})
	}
}

// notFiredStatus is the ledger status of slots not fired for reason: missed
// for a misfire, skipped for a pause, an overlap or an operator's skip.
func notFiredStatus(reason string) kvstore.TickStatus {
	if reason == reasonPaused || reason == reasonOperator || strings.HasPrefix(reason, "overlap") {
		return kvstore.TickSkipped
	}
	return kvstore.TickMissed
}

// replanned reports a state that could not have come from its spec (see
// Decision.Implausible), now re-planned: a warning and an event.
func (e *Engine) replanned(j slotJob, d Decision, now time.Time) {
	e.log.Warn("implausible state re-planned", "schedule", j.id, "reason", d.Implausible, "next", d.Next)
	e.event(kvstore.Event{Kind: kvstore.EventReplanned, Schedule: j.id, Slot: d.Next, Reason: d.Implausible + "; re-planned, next slot " + stamp(d.Next),
		Owner: e.cfg.Instance, At: now.UTC()})
}

// reasonCategory reduces a not-fired reason to a metric label.
func reasonCategory(r string) string {
	switch {
	case r == reasonPaused:
		return "paused"
	case r == reasonOperator:
		return "operator"
	case strings.HasPrefix(r, "overlap"):
		return "overlap"
	case strings.HasPrefix(r, "misfire"):
		return "misfire"
	}
	return "other"
}

// tickReason is the ledger's reason for a published slot.
func tickReason(c kvstore.Claim) string {
	if c.Note != "" {
		return c.Reason + ": " + c.Note
	}
	return c.Reason
}

// recordSkipped writes the ledger entry and event of every occurrence a
// calendar passed over before the next slot. They are observations: a
// failure is logged, not retried.
func (e *Engine) recordSkipped(ctx context.Context, j slotJob, step cronx.Step, now time.Time) {
	for _, sk := range step.Skipped {
		t := kvstore.Tick{Schedule: j.id, Workflow: j.workflow, Slot: sk.Nominal.UTC(), Status: kvstore.TickSkipped,
			Reason: sk.Reason, Owner: e.cfg.Instance, At: now.UTC(), Through: utc(sk.Through)}
		if err := e.store.PutTick(ctx, t); err != nil {
			e.log.Warn("record skipped slot", "schedule", j.id, "err", err)
		}
		e.event(kvstore.Event{Kind: kvstore.EventSkipped, Schedule: j.id, Slot: sk.Nominal.UTC(), Reason: sk.Reason,
			Owner: e.cfg.Instance, At: now.UTC()})
	}
	if n := step.SkippedCount; n > 0 {
		e.log.Info("occurrences skipped", "schedule", j.id, "count", n, "next", step.At)
		e.cfg.Observer.NotFired(string(kvstore.TickSkipped), "calendar", n)
	}
}

// findLegacyFire searches the fire stream for slotID among the messages
// published on the workflow-only subject form sched.fire.<workflow> (schedulers before per-schedule subjects) while claim
// old was live. It is the last resort of a takeover that comes after the
// duplicate window has forgotten the first publish; fires on the
// per-schedule subject are found by checkClaim with one direct get.
func (e *Engine) findLegacyFire(ctx context.Context, workflow, slotID string, old kvstore.Claim) (bool, error) {
	l := e.store.Layout()
	const skew = 5 * time.Second
	start := old.At.Add(-skew)
	end := old.Expires.Add(skew)
	cons, err := e.store.JetStream().OrderedConsumer(ctx, l.FiresStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{l.LegacyFireSubject(workflow)},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy,
		OptStartTime:   &start,
		HeadersOnly:    true,
	})
	if err != nil {
		return false, fmt.Errorf("fire: search %s for slot %s: %w", l.FiresStream, slotID, err)
	}
	for {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return false, fmt.Errorf("fire: search %s for slot %s: %w", l.FiresStream, slotID, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			if m.Headers().Get(kvstore.HeaderMsgID) == slotID {
				return true, nil
			}
			if md.Timestamp.After(end) || md.NumPending == 0 {
				return false, nil
			}
		}
		if err := batch.Error(); err != nil {
			return false, fmt.Errorf("fire: search %s for slot %s: %w", l.FiresStream, slotID, err)
		}
		if n == 0 {
			return false, nil
		}
	}
}

// maxMissedTicks bounds the ledger entries one misfire writes: one per
// slot up to it, then one summary entry for the rest.
const maxMissedTicks = 1000

// recordMissed writes a ledger entry per slot a decision did not fire (up
// to maxMissedTicks, then one summary) and one event. They are
// observations: a failure is logged, not retried.
func (e *Engine) recordMissed(ctx context.Context, j slotJob, d Decision, now time.Time) {
	if d.Missed == 0 {
		return
	}
	status := notFiredStatus(d.MissedReason)
	kind := kvstore.EventMissed
	if status == kvstore.TickSkipped {
		kind = kvstore.EventSkipped
	}
	e.log.Info("slots not fired", "schedule", j.id, "count", d.Missed, "first", d.FirstMissed, "last", d.LastMissed, "reason", d.MissedReason)
	e.cfg.Observer.NotFired(string(status), reasonCategory(d.MissedReason), d.Missed)
	n, nom, written := d.FirstMissed, d.FirstMissedNominal, 0
	for !n.IsZero() && !n.After(d.LastMissed) && written < maxMissedTicks {
		reason := d.MissedReason
		if d.MissedThreshold > 0 {
			reason = MisfireReason(now.Sub(n), d.MissedThreshold, d.MissedNote) // each slot its own lateness
		}
		t := kvstore.Tick{Schedule: j.id, Workflow: j.workflow, Slot: n.UTC(), Status: status,
			Reason: reason, Owner: e.cfg.Instance, At: now.UTC()}
		if err := e.store.PutTick(ctx, t); err != nil {
			e.log.Warn("record missed slot", "schedule", j.id, "err", err)
			return
		}
		written++
		st := cronx.ExplainAfter(j.compiled.Schedule, n, nom)
		n, nom = st.At, st.Nominal
	}
	if rest := d.Missed - written; rest > 0 && !n.IsZero() {
		more := fmt.Sprintf("%d more slots", rest)
		if d.MissedAtLeast {
			more = "at least " + more
		}
		t := kvstore.Tick{Schedule: j.id, Workflow: j.workflow, Slot: n.UTC(), Status: status, Owner: e.cfg.Instance, At: now.UTC(),
			Reason:  fmt.Sprintf("%s (this entry stands for %s through %s)", d.MissedReason, more, d.LastMissed.UTC().Format(time.RFC3339)),
			Through: d.LastMissed.UTC()}
		if err := e.store.PutTick(ctx, t); err != nil {
			e.log.Warn("record missed slots", "schedule", j.id, "err", err)
		}
	}
	e.event(kvstore.Event{Kind: kind, Schedule: j.id, Slot: d.FirstMissed, Reason: d.MissedReason,
		Count: uint64(d.Missed), CountAtLeast: d.MissedAtLeast, Owner: e.cfg.Instance, At: now.UTC()})
}

// reportInvalid logs and publishes an invalid-spec event.
func (e *Engine) reportInvalid(id string, err error) {
	field := ""
	if fe := (*kvstore.FieldError)(nil); errors.As(err, &fe) {
		field = fe.Field
	}
	e.log.Warn("invalid spec; the schedule will not fire until it is fixed", "schedule", id, "field", field, "err", err)
	e.event(kvstore.Event{Kind: kvstore.EventInvalid, Schedule: id, Field: field, Reason: err.Error(),
		Owner: e.cfg.Instance, At: e.cfg.Clock.Now().UTC()})
}

// event publishes an observer event on sched.event.<kind>.<id>, which the
// events stream captures, when Config.Events has its kind. Events are best effort (a core publish, no ack
// awaited): they never hold up a fire.
func (e *Engine) event(ev kvstore.Event) {
	e.cfg.Observer.Event(ev.Kind)
	if !e.cfg.Events.Has(ev.Kind) {
		return
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	subj := e.store.Layout().EventSubject(ev.Kind, eventfilter.SubjectID(ev))
	if err := e.store.JetStream().Conn().Publish(subj, data); err != nil {
		e.log.Debug("publish event", "subject", subj, "err", err)
	}
}
