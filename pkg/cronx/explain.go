package cronx

import "time"

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

// Skip is an occurrence that does not fire, and why.
type Skip struct {
	Nominal time.Time
	Reason  string
}

// Explainer is a Schedule that explains its fire times.
type Explainer interface {
	Explain(after time.Time) Step
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

var (
	_ Explainer = (*Cron)(nil)
	_ Explainer = (*Bounded)(nil)
)
