package cronx

import (
	"fmt"
	"strings"
	"time"
)

// Step explains one fire time of a schedule: where it came from and what
// was passed over before it. Calendars (package calendar) move and skip
// occurrences; a Cron moves them across DST gaps and overlaps.
type Step struct {
	// At is the fire time; zero when there is none.
	At time.Time
	// Nominal is the recurrence's occurrence At came from (equal to At
	// unless it was moved).
	Nominal time.Time
	// Moved says why At differs from Nominal, e.g. "moved: 02:30 does not
	// exist on 2026-03-08 (DST gap); fires when the gap ends"; "" when not
	// moved.
	Moved string
	// Skipped lists occurrences passed over before At (at most 100);
	// SkippedCount counts all of them.
	Skipped      []Skip
	SkippedCount int
}

// Skip is an occurrence that does not fire, and why; or a run of them.
type Skip struct {
	Nominal time.Time
	// Through, when set, ends a run of occurrences that went the same way:
	// the Skip stands for every occurrence in [Nominal, Through].
	Through time.Time
	Reason  string
}

// Notes says what moved st's fire and what was passed over before it, one
// line each, times in loc written with layout: "skipped 2026-04-03 17:30:
// holiday ..." (a run: "skipped 2026-04-04 00:00 through 2026-04-05
// 23:59: ..."), "and 3 more skipped", "moved from 2026-04-03 17:30:
// rolled to ...". Every occurrence merged into a fire or moved past
// another is named, never only the fires (preview --explain, the
// console).
func (st Step) Notes(loc *time.Location, layout string) []string {
	var notes []string
	for _, sk := range st.Skipped {
		when := sk.Nominal.In(loc).Format(layout)
		if !sk.Through.IsZero() && sk.Through.After(sk.Nominal) {
			when += " through " + sk.Through.In(loc).Format(layout)
		}
		notes = append(notes, "skipped "+when+": "+sk.Reason)
	}
	if extra := st.SkippedCount - len(st.Skipped); extra > 0 {
		notes = append(notes, fmt.Sprintf("and %d more skipped", extra))
	}
	if st.Moved != "" {
		note := st.Moved
		if !st.Nominal.IsZero() && !st.Nominal.Equal(st.At) && !strings.HasPrefix(note, "moved:") && !strings.HasPrefix(note, "shifted:") {
			note = "moved from " + st.Nominal.In(loc).Format(layout) + ": " + note
		}
		notes = append(notes, note)
	}
	return notes
}

// Explainer is a Schedule that explains its fire times.
type Explainer interface {
	Explain(after time.Time) Step
}

// Resumer is a Schedule whose fires can come from occurrences earlier
// than the fire before them (a calendar's moves): the fire after one at
// at is found from nominal, the occurrence it came from, so that no
// occurrence between the two is passed over unseen.
type Resumer interface {
	ExplainAfter(at, nominal time.Time) Step
}

// ExplainAfter is the step after a fire at at that came from occurrence
// nominal: s's own when s is a Resumer and the fire was moved (nominal
// set and not at), else Explain(s, at). Chaining it from step to step
// (At, Nominal) walks every fire of s in order.
func ExplainAfter(s Schedule, at, nominal time.Time) Step {
	if r, ok := s.(Resumer); ok && !nominal.IsZero() && !nominal.Equal(at) {
		return r.ExplainAfter(at, nominal)
	}
	return Explain(s, at)
}

// Explain returns s's next fire time after after with its explanation: the
// Explainer's own when s is one, else a plain step.
func Explain(s Schedule, after time.Time) Step {
	if e, ok := s.(Explainer); ok {
		return e.Explain(after)
	}
	t := s.Next(after)
	return Step{At: t, Nominal: t}
}

// Explain is Next with the DST adjustment spelled out.
func (c *Cron) Explain(after time.Time) Step {
	t, adj := c.next(after)
	st := Step{At: t, Nominal: t}
	if adj.Kind == "moved" || adj.Kind == "shifted" {
		st.Moved = adj.String()
	}
	return st
}

// Explain is Next with the inner schedule's explanation, when it has one.
func (b *Bounded) Explain(after time.Time) Step {
	t := b.Next(after)
	if t.IsZero() {
		return Step{}
	}
	if e, ok := b.Schedule.(Explainer); ok {
		from := after
		if !b.Start.IsZero() && from.Before(b.Start) {
			from = b.Start.Add(-time.Nanosecond)
		}
		if st := e.Explain(from); st.At.Equal(t) {
			return st
		}
	}
	return Step{At: t, Nominal: t}
}

// ExplainAfter is ExplainAfter of the inner schedule within the bounds.
func (b *Bounded) ExplainAfter(at, nominal time.Time) Step {
	st := ExplainAfter(b.Schedule, at, nominal)
	if st.At.IsZero() || !b.End.IsZero() && st.At.After(b.End) {
		return Step{}
	}
	if b.Count > 0 && !b.withinCount(st.At) {
		return Step{} // past the count
	}
	return st
}

var (
	_ Explainer = (*Cron)(nil)
	_ Explainer = (*Bounded)(nil)
	_ Resumer   = (*Bounded)(nil)
)
