package readmodel

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// AuditWindow is how many of the audit trail's last entries a describe
// reads for a schedule's operator actions: the trail has no index by
// schedule, and reading it whole would cost as much as the trail is long.
const AuditWindow = 10_000

// auditEntry is what a describe reads of an audit entry, by the JSON
// names of pkg/audit's Entry (the trail of any scheduler version).
type auditEntry struct {
	Kind         string          `json:"kind"`
	At           time.Time       `json:"at"`
	Actor        string          `json:"actor"`
	ClaimedActor string          `json:"claimed_actor,omitempty"`
	Action       string          `json:"action"`
	Target       string          `json:"target"`
	Detail       json.RawMessage `json:"detail,omitempty"`
	Phase        string          `json:"phase,omitempty"`
	Intents      []uint64        `json:"intents,omitempty"`
}

// LedgerActions are schedule id's last n ledger entries (its slots:
// fired, skipped, missed, ...), newest slot first.
func (m Model) LedgerActions(ctx context.Context, id string, n int) ([]admin.Action, error) {
	ledger, err := m.Store.Ledger(ctx, id)
	if err != nil {
		return nil, err
	}
	ticks := make([]kvstore.Tick, 0, len(ledger))
	for _, t := range ledger {
		ticks = append(ticks, t)
	}
	slices.SortFunc(ticks, func(x, y kvstore.Tick) int {
		return cmp.Or(y.Slot.Compare(x.Slot), strings.Compare(y.Key(), x.Key()))
	})
	out := make([]admin.Action, 0, min(n, len(ticks)))
	for _, t := range ticks[:min(n, len(ticks))] {
		slot := t.Slot
		a := admin.Action{At: cmp.Or(t.At, t.Slot), Source: admin.SourceLedger, Status: string(t.Status), Slot: &slot,
			SlotID: t.SlotID, Reason: t.Reason, Owner: t.Owner}
		if t.Outcome != "" {
			a.Reason = strings.TrimPrefix(a.Reason+"; outcome: "+t.Outcome, "; ")
		}
		out = append(out, a)
	}
	return out, nil
}

// AuditActions are the operator actions on schedule id among the audit
// trail's last window entries, oldest first; intents the trail says were
// abandoned are left out. kvstore.ErrNotFound when there is no trail
// (the schedulers run without an audit key).
func (m Model) AuditActions(ctx context.Context, trail audit.Trail, id string, window int) ([]admin.Action, error) {
	trail = trail.WithDefaults()
	js := m.Store.JetStream()
	stream, err := js.Stream(ctx, trail.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("%w: no audit trail %s", kvstore.ErrNotFound, trail.Stream)
	}
	if err != nil {
		return nil, fmt.Errorf("readmodel: audit trail %s: %w", trail.Stream, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("readmodel: audit trail %s: %w", trail.Stream, err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 || last == 0 {
		return nil, nil
	}
	start := max(info.State.FirstSeq, 1)
	if last > uint64(window) {
		start = max(start, last-uint64(window)+1)
	}
	cons, err := js.OrderedConsumer(ctx, trail.Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{trail.Subject + "." + audit.KindAction},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy, OptStartSeq: start, InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, fmt.Errorf("readmodel: read audit trail %s: %w", trail.Stream, err)
	}
	defer m.Store.DeleteConsumer(trail.Stream, cons)
	var (
		out       []admin.Action
		seqs      []uint64
		abandoned = map[uint64]bool{}
	)
	for done := false; !done; {
		batch, err := cons.FetchNoWait(256)
		if err != nil {
			return nil, fmt.Errorf("readmodel: read audit trail %s: %w", trail.Stream, err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			md, err := msg.Metadata()
			if err != nil {
				continue
			}
			if md.NumPending == 0 || md.Sequence.Stream >= last {
				done = true
			}
			var e auditEntry
			if json.Unmarshal(msg.Data(), &e) != nil || e.Kind != audit.KindAction {
				continue
			}
			if e.Phase == audit.PhaseAbandoned {
				for _, s := range e.Intents {
					abandoned[s] = true
				}
				continue
			}
			if e.Target != id || !strings.HasPrefix(e.Action, "schedule.") {
				continue
			}
			out = append(out, auditAction(e))
			seqs = append(seqs, md.Sequence.Stream)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, fmt.Errorf("readmodel: read audit trail %s: %w", trail.Stream, err)
		}
		if n == 0 {
			done = true
		}
	}
	kept := out[:0]
	for i, a := range out {
		if !abandoned[seqs[i]] {
			kept = append(kept, a)
		}
	}
	return kept, nil
}

// auditAction is an audit entry as a describe shows it: who did what,
// and the note or count it gave.
func auditAction(e auditEntry) admin.Action {
	who := e.Actor
	if e.ClaimedActor != "" && e.ClaimedActor != e.Actor {
		who += " (as " + e.ClaimedActor + ")"
	}
	return admin.Action{At: e.At, Source: admin.SourceAudit, Action: e.Action, Actor: who, Reason: detailReason(e.Detail)}
}

// detailReason says what an action's detail gave: its note, until, count
// or slot; "" for a detail without any (a spec written).
func detailReason(raw json.RawMessage) string {
	var d struct {
		Note  string    `json:"note"`
		Until time.Time `json:"until"`
		Count int       `json:"count"`
		Slot  string    `json:"slot_id"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &d) != nil {
		return ""
	}
	var parts []string
	if d.Note != "" {
		parts = append(parts, d.Note)
	}
	if !d.Until.IsZero() {
		parts = append(parts, "until "+d.Until.UTC().Format(time.RFC3339))
	}
	if d.Count > 0 {
		parts = append(parts, fmt.Sprintf("%d slot(s)", d.Count))
	}
	if d.Slot != "" {
		parts = append(parts, "slot "+d.Slot)
	}
	return strings.Join(parts, "; ")
}

// stateActions are the operator actions a state record keeps: its pause
// and its pending triggers (for a fleet without an audit trail, or an
// action older than its window). Those the trail names (an action of the
// same kind within a minute) are left out.
func stateActions(st *kvstore.State, trail []admin.Action) []admin.Action {
	if st == nil {
		return nil
	}
	named := func(action string, at time.Time) bool {
		return slices.ContainsFunc(trail, func(a admin.Action) bool {
			d := a.At.Sub(at)
			return a.Action == action && d < time.Minute && d > -time.Minute
		})
	}
	var out []admin.Action
	if p := st.Paused; p != nil && !named("schedule.pause", p.At) {
		reason := p.Note
		if !p.Until.IsZero() {
			reason = strings.TrimPrefix(reason+"; until "+p.Until.UTC().Format(time.RFC3339), "; ")
		}
		out = append(out, admin.Action{At: p.At, Source: admin.SourceState, Action: "schedule.pause", Reason: reason})
	}
	if !st.ResumedAt.IsZero() && !named("schedule.resume", st.ResumedAt) {
		out = append(out, admin.Action{At: st.ResumedAt, Source: admin.SourceState, Action: "schedule.resume"})
	}
	for _, t := range st.Triggers {
		if !named("schedule.trigger", t.At) {
			out = append(out, admin.Action{At: t.At, Source: admin.SourceState, Action: "schedule.trigger", Reason: strings.TrimPrefix(t.Note+"; pending", "; ")})
		}
	}
	return out
}
