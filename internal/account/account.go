package account

import (
	"cmp"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Fates of an owed occurrence in a report.
const (
	// FateFired: its slot is in the fire stream (Evidence names the
	// message), whatever the worker made of it since.
	FateFired = "fired"
	// FateNotFired: the ledger says why its slot was not fired (missed by
	// the misfire policy, skipped by a pause, an overlap policy or an
	// operator, refused by JetStream).
	FateNotFired = "not_fired"
	// FateMerged: the calendar moved it to or before the fire at Slot, into
	// which it merged.
	FateMerged = "merged"
	// FateSkipped: the calendar skipped it (a holiday, a day without
	// working hours).
	FateSkipped = "skipped"
	// FatePending: the engine has not come to it yet (its next slot is at
	// or before it, or the schedule is paused since before it and the
	// pause is recorded when it ends).
	FatePending = "pending"
	// FateUnaccounted: nothing says what became of it. A defect: the
	// engine owes every such slot a fire or a reason.
	FateUnaccounted = "unaccounted"
)

// Fates are the fates an entry may have, the values a report request
// selects by (admin.AccountRequest.Fates).
func Fates() []string {
	return []string{FateFired, FateNotFired, FateMerged, FateSkipped, FatePending, FateUnaccounted}
}

// Entry is one occurrence a schedule owed, its fate and the evidence.
type Entry struct {
	// Nominal is the recurrence's time for it; Slot the fire time it
	// came to (moved by a calendar), or the fire it merged into.
	Nominal time.Time `json:"nominal"`
	Slot    time.Time `json:"slot,omitzero"`
	Fate    string    `json:"fate"`
	// Status is the ledger's status for the slot (dispatched, completed,
	// missed, skipped, failed, ...), when it has an entry.
	Status string `json:"status,omitempty"`
	// Reason says why it did not fire, or why it moved.
	Reason string `json:"reason,omitempty"`
	// Evidence is where its fate is written: "SCHED_FIRES seq 812",
	// "sched_ticks <key>", "calendar", or what it waits for.
	Evidence string `json:"evidence,omitempty"`
	// Seq is the fire's stream sequence (fired).
	Seq uint64 `json:"seq,omitempty"`
}

// Summary counts a report's entries.
type Summary struct {
	Owed        int `json:"owed"`
	Fired       int `json:"fired"`
	NotFired    int `json:"not_fired_with_reason"`
	Pending     int `json:"pending"`
	Unaccounted int `json:"unaccounted"`
	// From and To are the range checked: the one asked for, clipped to
	// the schedule's creation, the ledger's retention and now.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Clipped says why the range is narrower than asked, "" when not.
	Clipped string `json:"clipped,omitempty"`
	// Truncated: more than MaxOccurrences were owed; the rest were not
	// checked.
	Truncated bool `json:"truncated,omitempty"`
}

// Line is the summary's one-line form: "owed 12, fired 9, not fired with
// reason 3, pending 0, unaccounted 0".
func (s Summary) Line() string {
	l := fmt.Sprintf("owed %d, fired %d, not fired with reason %d, pending %d, unaccounted %d", s.Owed, s.Fired, s.NotFired, s.Pending, s.Unaccounted)
	if s.Truncated {
		l += " (truncated)"
	}
	return l
}

// MaxOccurrences bounds the occurrences one report walks.
const MaxOccurrences = 1_000_000

// Input is what an account of one schedule looks at. Account does no I/O.
type Input struct {
	ID string
	// Recurrence is the schedule's compiled recurrence (RecurrenceOf).
	Recurrence Recurrence
	// Owed is when the schedule began to owe slots: its spec's write, or
	// a one-shot's time (less a nanosecond: an occurrence at Owed is owed).
	Owed time.Time
	// From and To bound the occurrences listed (by nominal time); Now is
	// now.
	From, To, Now time.Time
	// Retained is the oldest time the ledger still holds entries for
	// (now less the tick retention; zero: all).
	Retained time.Time
	// State is the schedule's state as schedulers see it (caught up with
	// the stream, or the plan of one without a record); nil: none.
	State *kvstore.State
	// Ledger is the schedule's ledger (kvstore.Store.Ledger): its
	// sched_ticks entries merged with its fires, by slot id.
	Ledger map[string]kvstore.Tick
}

// Account lists every occurrence the schedule owed within the range and
// its fate, with the evidence, and sums them up. onEntry is called with
// each entry in order (nil: none kept); the summary counts all of them.
func Account(in Input, onEntry func(Entry)) Summary {
	s := Summary{From: in.From, To: in.To}
	if s.To.IsZero() || s.To.After(in.Now) {
		s.To = in.Now
	}
	if !in.Retained.IsZero() && s.From.Before(in.Retained) {
		s.From, s.Clipped = in.Retained, "before "+stamp(in.Retained)+" the ledger has expired (the tick retention)"
	}
	if s.From.Before(in.Owed) {
		// The later bound is where the range starts: the note names it.
		s.From, s.Clipped = in.Owed, "the schedule owed nothing before "+stamp(in.Owed)
	}
	ranges := rangesOf(in.Ledger)
	in.Recurrence.Walk(in.Owed, MaxOccurrences, func(o Occurrence) bool {
		if o.Nominal.After(s.To) {
			return false
		}
		if !o.Nominal.After(s.From) {
			return true
		}
		if s.Owed == MaxOccurrences {
			s.Truncated = true
			return false
		}
		e := judge(in, o, ranges)
		s.Owed++
		switch e.Fate {
		case FateFired:
			s.Fired++
		case FatePending:
			s.Pending++
		case FateUnaccounted:
			s.Unaccounted++
		default:
			s.NotFired++
		}
		if onEntry != nil {
			onEntry(e)
		}
		return true
	})
	return s
}

// judge finds occurrence o's fate and evidence.
func judge(in Input, o Occurrence, ranges []kvstore.Tick) Entry {
	e := Entry{Nominal: o.Nominal, Slot: o.At}
	switch o.Fate {
	case Skipped:
		e.Fate, e.Reason, e.Evidence = FateSkipped, o.Reason, "calendar"
		if t, key, ok := entryFor(in, o.Nominal, ranges); ok && t.Status == kvstore.TickSkipped {
			e.Status, e.Reason, e.Evidence = string(t.Status), t.Reason, "sched_ticks "+key
		}
		return e
	case Merged:
		e.Fate, e.Reason, e.Evidence = FateMerged, "merged into the fire at "+stamp(o.At), "calendar"
		if t, key, ok := entryFor(in, o.Nominal, ranges); ok && t.Status == kvstore.TickSkipped {
			e.Status, e.Reason, e.Evidence = string(t.Status), t.Reason, "sched_ticks "+key
		}
		return e
	}
	if o.Moved {
		e.Reason = "moved from " + stamp(o.Nominal) + ": " + o.Reason
	}
	if t, key, ok := entryFor(in, o.At, ranges); ok {
		e.Status = string(t.Status)
		if t.Seq > 0 {
			e.Fate, e.Seq = FateFired, t.Seq
			e.Evidence = fmt.Sprintf("%s seq %d", cmp.Or(t.Stream, "SCHED_FIRES"), t.Seq)
			if t.Reason != "" {
				e.Reason = t.Reason
			}
			return e
		}
		switch t.Status {
		case kvstore.TickMissed, kvstore.TickSkipped, kvstore.TickFailed:
			e.Fate, e.Reason, e.Evidence = FateNotFired, t.Reason, "sched_ticks "+key
			return e
		case kvstore.TickDispatched, kvstore.TickStarted, kvstore.TickCompleted, kvstore.TickCancelled:
			// A dispatched entry of a scheduler from before per-schedule
			// subjects, or an outcome whose fire aged out of the stream.
			e.Fate, e.Evidence = FateFired, "sched_ticks "+key
			return e
		}
	}
	if pending, why := pendingAt(in, o.At); pending {
		e.Fate, e.Evidence = FatePending, why
		return e
	}
	e.Fate, e.Evidence = FateUnaccounted, "no fire in the stream, no ledger entry"
	return e
}

// pendingAt reports whether the engine has yet to come to slot, and why.
func pendingAt(in Input, slot time.Time) (bool, string) {
	st := in.State
	if st == nil {
		return true, "no state: the schedule has not been decided yet"
	}
	if p := st.Paused; p != nil && !slot.Before(p.At) {
		return true, "paused since " + stamp(p.At) + ": recorded when the pause ends"
	}
	if c := st.Claim; c != nil && c.SlotID == "" && c.Slot.Equal(slot) && !c.Settled() {
		return true, "claimed by " + c.Owner + ", not yet settled"
	}
	if !st.Ended && !st.Next.IsZero() && !slot.Before(st.Next) {
		return true, "the schedule's next slot is " + stamp(st.Next)
	}
	return false, ""
}

// entryFor is the ledger's entry for the slot at t: its own, or one that
// stands for a run of slots through a later time (Tick.Through).
func entryFor(in Input, t time.Time, ranges []kvstore.Tick) (kvstore.Tick, string, bool) {
	key := kvstore.SlotID(in.ID, t)
	if e, ok := in.Ledger[key]; ok {
		return e, key, true
	}
	for _, r := range ranges {
		if !t.Before(r.Slot) && !t.After(r.Through) {
			return r, r.Key(), true
		}
	}
	return kvstore.Tick{}, "", false
}

// rangesOf is the ledger's entries that stand for runs of slots.
func rangesOf(ledger map[string]kvstore.Tick) []kvstore.Tick {
	var out []kvstore.Tick
	for _, t := range ledger {
		if !t.Through.IsZero() {
			out = append(out, t)
		}
	}
	return out
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
