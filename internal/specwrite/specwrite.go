// Package specwrite is what the store does to a spec a user registers
// before it writes it (docs/records.md, "Registering the same spec again
// writes nothing"): WithAnchor fills in the phase of an every schedule,
// and Same decides that the spec is the one stored, so that nothing is
// written (no revision, no audit entry; the CLI and the API answer
// "unchanged"). The store (internal/jsstore), the CLI's previews and the
// admin API's dry runs use it, so that they agree.
package specwrite

import (
	"bytes"
	"time"

	"github.com/jetsched/jetsched/internal/jsonenc"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// WithAnchor returns s as the store writes it over stored (nil when there
// is none): an every spec that says nothing about its phase (no align, no
// anchor), or that asks for align "anchor" without an anchor, counts from
// its registration. When stored has the same interval it keeps stored's
// phase, so that re-registering (every instance, at every start) keeps the
// cadence, and a spec written before align existed keeps its behaviour;
// otherwise the anchor is now, to the second, with align "anchor". Other
// specs are returned unchanged.
func WithAnchor(s kvstore.Spec, stored *kvstore.Spec, now time.Time) kvstore.Spec {
	if s.Every == "" || s.Anchor != nil || s.Align != "" && s.Align != kvstore.AlignAnchor {
		return s
	}
	same := stored != nil && sameEvery(s.Every, stored.Every)
	switch {
	case s.Align == "" && same:
		s.Align, s.Phase, s.Anchor = stored.Align, stored.Phase, cloneTime(stored.Anchor)
		return s
	case s.Align == kvstore.AlignAnchor && same && stored.Align == kvstore.AlignAnchor && stored.Anchor != nil:
		s.Anchor = cloneTime(stored.Anchor)
		return s
	}
	anchor := now.UTC().Truncate(time.Second)
	s.Align, s.Anchor = kvstore.AlignAnchor, &anchor
	return s
}

// sameEvery reports whether two every texts are the same valid interval
// ("90m" and "1h30m" are).
func sameEvery(a, b string) bool {
	da, errA := cronx.ParseEvery(a)
	db, errB := cronx.ParseEvery(b)
	return errA == nil && errB == nil && da == db
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// Same reports whether incoming, a spec as a user registers it, is the
// spec stored, so that registering it again writes nothing.
//
// Both are compared in canonical form: the id is left out (it repeats the
// key), and so is the writer's trace context; times are compared as
// instants whatever their zone offset, the input and an inline calendar
// as canonical JSON. And fields the system fills in when it first writes
// a spec count as the user's when the user leaves them out: incoming
// takes them from stored before the comparison. Those fields are the
// align, anchor and phase of an every schedule, which the store gives it
// at the first write and keeps for the same interval (WithAnchor, the one
// place that fills them; a field the system fills in must be filled
// there, and Same follows).
func Same(stored, incoming kvstore.Spec) bool {
	incoming = WithAnchor(incoming, &stored, time.Time{}) // a new anchor differs from stored's anyway
	a, errA := canonical(stored).Encode()
	b, errB := canonical(incoming).Encode()
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// canonical is the spec in the form Same compares.
func canonical(s kvstore.Spec) kvstore.Spec {
	s.ID, s.Trace = "", nil
	for _, t := range []**time.Time{&s.Anchor, &s.At, &s.Start, &s.End} {
		if *t != nil {
			u := (*t).UTC()
			*t = &u
		}
	}
	if c, err := jsonenc.Canonical(s.Input); err == nil {
		s.Input = c
	}
	if c, err := jsonenc.Canonical(s.CalendarInline); err == nil {
		s.CalendarInline = c
	}
	return s
}
