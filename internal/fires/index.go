package fires

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// newEntry indexes a new entry for schedule id. The id is copied: a
// watched key is a substring of its message's subject, which it would
// keep alive for as long as the schedule exists.
func (l *loop) newEntry(id string) *entry {
	en := &entry{id: strings.Clone(id)}
	l.entries[en.id] = en
	return en
}

// forget drops en from the entries. It leaves any window queue (which
// holds entries, not ids: windows.pend) at once.
func (l *loop) forget(en *entry) {
	en.queued = false
	delete(l.entries, en.id)
}

// onSpecs takes a batch of decoded specs.
func (l *loop) onSpecs(b []decodedSpec) {
	for i := range b {
		l.onSpec(&b[i])
	}
}

func (l *loop) onSpec(d *decodedSpec) {
	kv := d.kv
	if kv == nil {
		l.load.specsIn()
		l.markReady()
		return
	}
	if !l.load.specsLoaded {
		l.load.sizeFor(kv)
	}
	id := kv.Key()
	en := l.entries[id]
	if isDelete(kv) {
		if en == nil || kv.Revision() <= en.specRev {
			return
		}
		en.specRev = kv.Revision()
		en.compiled.Schedule, en.invalid = nil, false
		en.spec, en.record, en.lazy = nil, "", false
		en.written = kv.Created().UnixNano() // when it was removed
		l.index.Remove(en)
		if en.busy {
			en.removed = true // finished when its worker reports back
			return
		}
		l.removeEntry(en)
		return
	}
	if en == nil {
		en = l.newEntry(id)
	}
	if kv.Revision() <= en.specRev {
		return
	}
	en.specRev = kv.Revision()
	en.written = 0
	if c := kv.Created(); !c.IsZero() {
		en.written = c.UnixNano()
	}
	en.removed = false
	spec, err := &d.spec, d.err // d is reused: an entry that keeps the spec keeps a copy
	en.spec, en.target, en.record, en.lazy = nil, targetOf(spec, l.e.traced), "", false
	en.calendar = spec.Calendar != ""
	if err == nil && spec.Calendar != "" {
		en.record = string(kv.Value()) // compiled again when the calendar changes
	}
	if err == nil && !l.load.specsLoaded {
		// Compiled on approach, from the record: no copy of the spec (at
		// a cold start of a million, a million of them made and dropped).
		l.load.makeLazy(en, kv.Value())
		return
	}
	kept := *spec
	en.spec = &kept
	if err != nil {
		en.invalid, en.compiled.Schedule = true, nil
		l.index.Remove(en)
		l.e.reportInvalid(id, err)
		return
	}
	if !l.load.calsLoaded && spec.Calendar != "" {
		// Compiled once every calendar is known (calendarsIn). The
		// others compile now, while the watch is still delivering.
		en.compiled.Schedule = nil
		return
	}
	if d.ahead {
		l.compiled(en, d.compiled, d.cerr)
		return
	}
	l.compile(en)
}

// compileAhead compiles d's spec on the decoder's goroutine if it names
// no calendar (the only input of a compile that the loop owns).
func (e *Engine) compileAhead(d *decodedSpec) {
	if d.kv == nil || isDelete(d.kv) || d.err != nil || d.spec.Calendar != "" {
		return
	}
	d.compiled, d.cerr = e.compileSpec(d.kv.Key(), &d.spec, nil)
	d.ahead = true
}

// compileSpec checks and compiles spec id, with src for a named calendar.
// Checked and compiled once: compile.Compile reports what Validate's own
// compile would, and shares the zones (no zone file read per spec). A
// calendar change can leave a schedule no slot at all: that is reported
// (invalid), not taken for the recurrence's end.
func (e *Engine) compileSpec(id string, spec *kvstore.Spec, src compile.CalendarSource) (compile.Compiled, error) {
	return compile.CheckRecord(*spec, id, src, &e.interner, e.cfg.Clock.Now()) // as PutSpec checks what it writes
}

// compile (re)builds an entry's schedule from its spec and the calendars
// known now; a failure is reported (log and invalid event).
func (l *loop) compile(en *entry) {
	spec := en.heldSpec()
	if spec == nil {
		return // compiled already, and no calendar can change it
	}
	c, err := l.e.compileSpec(en.id, spec, l.calendarSource)
	l.compiled(en, c, err)
}

// compiled makes c (or err) en's compiled schedule and schedules it.
func (l *loop) compiled(en *entry, c compile.Compiled, err error) {
	en.clearPlan() // planned again from the new schedule
	if err != nil {
		en.invalid, en.compiled.Schedule = true, nil
		l.index.Remove(en)
		l.e.reportInvalid(en.id, err)
		return
	}
	if en.form == statePacked && en.packed.plan == c.Plan {
		c.Plan = en.packed.plan // one copy of the fingerprint (setState shares it the other way)
	}
	en.compiled, en.invalid, en.failures = l.sched(c), false, 0
	en.spec = nil // a calendar's change decodes the record again (record)
	l.schedule(en)
}

// sched is c as the loop keeps it, its policy shared with the
// schedules' that have the same one (up to maxPolicies of them: specs
// may each give their own durations).
func (l *loop) sched(c compile.Compiled) sched {
	pol := l.policies[c.Policy]
	if pol == nil && len(l.policies) < maxPolicies {
		p := c.Policy
		pol = &p
		l.policies[p] = pol
	}
	return schedOf(c, pol)
}

// maxPolicies bounds the distinct policies the loop shares.
const maxPolicies = 1024

func (l *loop) calendarSource(name string) (*calendar.Calendar, error) {
	if c, ok := l.cal.known[name]; ok {
		return c, nil
	}
	if err, ok := l.cal.bad[name]; ok {
		// Its schedules are invalid, saying why (their events and status).
		return nil, fmt.Errorf("its record in the calendars bucket is invalid (calendar.Parse, as calendar put checks it): %w", err)
	}
	return nil, kvstore.ErrNotFound
}

// onCalendar keeps the named calendars and re-compiles the schedules that
// use a changed one (their plan changes, so they re-plan from now).
func (l *loop) onCalendar(kv jetstream.KeyValueEntry) {
	if kv == nil {
		l.load.calendarsIn()
		l.markReady()
		return
	}
	name := kv.Key()
	l.cal.written = max(l.cal.written, kv.Created().UnixNano())
	delete(l.cal.bad, name)
	if isDelete(kv) {
		delete(l.cal.known, name)
	} else if cal, err := calendar.ParseZones(kv.Value(), &l.e.interner.Zones); err == nil {
		l.cal.known[name] = cal
	} else {
		l.e.log.Warn("invalid calendar record; schedules using it are invalid until it is fixed", "calendar", name, "err", err)
		delete(l.cal.known, name)
		l.cal.bad[name] = err
	}
	if !l.load.calsLoaded {
		return
	}
	for _, en := range l.entries {
		if en.lazy && en.calendar {
			// Compiled now, with the calendars as they are now, as if it
			// had not been lazy (it may name another calendar: compiled
			// sooner than it had to be, no harm).
			l.load.compileLazy(en)
			continue
		}
		if en.specRev == 0 || en.lazy || en.spec == nil && en.record == "" {
			continue
		}
		if spec := en.heldSpec(); spec == nil || spec.Calendar != name {
			continue
		}
		if en.busy {
			en.stale = true // re-compiled when its worker reports back
			continue
		}
		l.compile(en)
	}
}

func (l *loop) onState(kv jetstream.KeyValueEntry) {
	if kv == nil {
		l.load.statesIn()
		l.markReady()
		return
	}
	if !l.load.statesLoaded {
		l.load.sizeFor(kv)
	}
	id := kv.Key()
	en := l.entries[id]
	if en == nil {
		if isDelete(kv) {
			return // nothing to forget (a first claim creates over the marker)
		}
		// State without a spec (yet): keep it, the spec may follow.
		en = l.newEntry(id)
	}
	if kv.Revision() <= en.stateRev {
		return // our own write, echoed, or older news
	}
	if en.busy || !l.e.leases.owns(kvstore.ShardOf(id, l.e.shards)) {
		// Busy: most likely the echo of the worker's own write, decoded
		// only if the worker's result turns out older. Another
		// instance's shard: kept as it came, decoded only once this
		// instance owns the shard (schedule), so that a fleet does not
		// decode every instance's writes everywhere.
		if en.pending == nil || kv.Revision() > en.pending.Revision() {
			en.pending = kv
		}
		if !en.busy {
			l.index.Remove(en)
			l.parked[id] = true
		}
		return
	}
	l.applyState(en, kv)
	l.schedule(en)
	l.load.fetchSpec(en)
}

// applyPending makes en's undecoded newer state record its state.
func (l *loop) applyPending(en *entry) {
	p := en.pending
	if p == nil {
		return
	}
	en.pending = nil
	if p.Revision() > en.stateRev {
		l.applyState(en, p)
	}
}

// applyState makes a watched state record the entry's state.
func (l *loop) applyState(en *entry, kv jetstream.KeyValueEntry) {
	if p := en.pending; p != nil && p.Revision() <= kv.Revision() {
		en.pending = nil // older news
	}
	en.stateRev = kv.Revision()
	if isDelete(kv) {
		l.win.notBehind(en.id)
		en.setState(nil, l.e.cfg.Instance)
	} else if st, err := kvstore.DecodeState(kv.Value()); err == nil {
		l.win.mergeBehind(en, &st)
		en.setState(&st, l.e.cfg.Instance)
	} else {
		l.e.log.Warn("undecodable state record; it will be re-planned", "schedule", en.id, "err", err)
		en.setState(&kvstore.State{Plan: planUndecodable}, l.e.cfg.Instance) // differs from any plan: re-plan from now
	}
}

// loaded reports whether every watch has delivered its initial values.
func (l *loop) loaded() bool { return l.load.loaded() }

// markReady closes ready once every watch has delivered its initial
// values, says what this instance found, and has the loader compile the
// rest of the load behind the loop.
func (l *loop) markReady() {
	if l.loaded() {
		select {
		case <-l.ready:
		default:
			close(l.ready)
			l.e.log.Info("due index ready", "schedules", len(l.entries), "due", l.index.Len())
			l.reportRecovery()
			l.load.ready()
		}
	}
}

// reportRecovery says what this instance found at start: schedules whose
// slot is overdue (each then follows its misfire policy, recorded per
// slot) and claims left unsettled by a previous owner (each is checked and,
// if its fire is missing, taken over).
func (l *loop) reportRecovery() {
	now := l.e.cfg.Clock.Now()
	var overdue, unsettled, invalid int
	for _, en := range l.entries {
		if en.invalid {
			invalid++
		}
		st := en.view(&l.scratch)
		if st == nil {
			continue
		}
		if !st.Ended && !st.Next.IsZero() && st.Next.Before(now) {
			overdue++
		}
		if st.Claim != nil && st.Claim.Owner != l.e.cfg.Instance {
			if st.Claim.Expires.After(now.Add(-l.e.dupWindow)) {
				unsettled++
			}
		}
	}
	l.e.log.Info("startup recovery", "schedules", len(l.entries), "overdue", overdue, "recent_claims_to_check", unsettled, "invalid", invalid)
	l.e.event(kvstore.Event{Kind: kvstore.EventRecovered, Instance: l.e.cfg.Instance, Owner: l.e.cfg.Instance, At: now.UTC(),
		Reason: fmt.Sprintf("%d schedules: in this instance's shards %d overdue (misfire policies apply) and %d recent claims of other instances to check; %d invalid", len(l.entries), overdue, unsettled, invalid),
		Count:  uint64(overdue)})
}
