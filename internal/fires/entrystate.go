package fires

import (
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// packedState holds the fields most state records have and nothing else:
// a schedule's record after plain fires (next slot, plan, counters, when
// and by whom written), or the loop's plan for a schedule without one. A
// decoded kvstore.State is 256 bytes with five time.Time of 24; kept in
// the entry like this, a million schedules take ~200 MB less and the
// collector has four pointers fewer to follow in each. A record with any
// other field set (a claim, a pause, triggers...) is kept whole instead.
type packedState struct {
	next, nominal, updated int64 // Unix ns; 0 is the zero time
	fires, missed, skipped uint64
	plan, reason, owner    string
	ended, missedAtLeast   bool
}

// packState packs st, if only the fields packedState has are set, each
// time in UTC and within the Unix-nanosecond range (so that unpacking
// gives st back exactly).
func packState(st *kvstore.State) (packedState, bool) {
	var p packedState
	if st.Claim != nil || st.Paused != nil || !st.ResumedAt.IsZero() || st.SkipNext != 0 || len(st.Triggers) > 0 ||
		st.Triggers != nil || st.Backfill != nil || st.Running != nil || !st.LastDone.IsZero() {
		return p, false
	}
	var ok1, ok2, ok3 bool
	p.next, ok1 = packTime(st.Next)
	p.nominal, ok2 = packTime(st.NextNominal)
	p.updated, ok3 = packTime(st.UpdatedAt)
	if !ok1 || !ok2 || !ok3 {
		return p, false
	}
	p.fires, p.missed, p.skipped = st.Fires, st.Missed, st.Skipped
	p.plan, p.reason, p.owner = st.Plan, st.NextReason, st.Owner
	p.ended, p.missedAtLeast = st.Ended, st.MissedAtLeast
	return p, true
}

// packTime is t in Unix ns, if that gives t back exactly: zero is 0, and
// the epoch itself (also 0) does not pack.
func packTime(t time.Time) (int64, bool) {
	if t.IsZero() {
		return 0, true
	}
	ns := t.UnixNano()
	if ns == 0 || t.Location() != time.UTC || unixNano(ns) != t {
		return 0, false
	}
	return ns, true
}

// unpack writes p into st, which it overwrites whole.
func (p *packedState) unpack(st *kvstore.State) {
	*st = kvstore.State{
		Next: unixNano(p.next), NextNominal: unixNano(p.nominal), UpdatedAt: unixNano(p.updated),
		Fires: p.fires, Missed: p.missed, Skipped: p.skipped,
		Plan: p.plan, NextReason: p.reason, Owner: p.owner,
		Ended: p.ended, MissedAtLeast: p.missedAtLeast,
	}
}

// stateForm is which of an entry's state forms it has.
type stateForm uint8

const (
	stateNone    stateForm = iota // no record and no plan
	statePlanned                  // the loop's plan (packed; its Plan is the compiled one)
	statePacked                   // a record, packed
	stateFull                     // a record, whole (entry.full)
)

// setState makes st (nil: none) the entry's state record; the plan, if
// any, goes. The Plan and Owner strings are shared with the entry's
// compiled plan and this instance's name when equal. st is not kept: a
// record that does not pack is copied, so that a caller's State (a
// decoded record, most often packed) need not live on the heap.
func (en *entry) setState(st *kvstore.State, instance string) {
	en.full = nil
	en.packed = packedState{}
	switch {
	case st == nil:
		en.form = stateNone
		return
	case st.Plan == en.compiled.Plan:
		st.Plan = en.compiled.Plan
	}
	if st.Owner == instance {
		st.Owner = instance
	}
	if p, ok := packState(st); ok {
		en.form, en.packed = statePacked, p
		return
	}
	full := *st // a copy: callers decode into a State of their own (applyState's stays on its stack)
	en.form, en.full = stateFull, &full
}

// setPlan makes p the entry's plan; only an entry without a record has one.
func (en *entry) setPlan(p packedState) { en.form, en.packed, en.full = statePlanned, p, nil }

// clearPlan forgets the entry's plan, if that is what it has.
func (en *entry) clearPlan() {
	if en.form == statePlanned {
		en.form, en.packed = stateNone, packedState{}
	}
}

// hasRecord reports whether the entry has a state record (not a plan).
func (en *entry) hasRecord() bool { return en.form == statePacked || en.form == stateFull }

// hasState reports whether the entry has a record or a plan.
func (en *entry) hasState() bool { return en.form != stateNone }

// view is the entry's state (record or plan), nil if none, written into
// buf unless it is kept whole. It is valid until the entry changes and is
// only read, never kept: for the loop's own decisions, which need no
// allocation. A job gets current.
func (en *entry) view(buf *kvstore.State) *kvstore.State {
	switch en.form {
	case stateFull:
		return en.full
	case statePacked, statePlanned:
		en.packed.unpack(buf)
		if en.form == statePlanned {
			buf.Plan = en.compiled.Plan
		}
		return buf
	}
	return nil
}

// current is the entry's state, a fresh copy unless it is kept whole
// (then the record itself, which nobody modifies in place).
func (en *entry) current() *kvstore.State {
	if en.form == stateFull {
		return en.full
	}
	return en.view(new(kvstore.State))
}
