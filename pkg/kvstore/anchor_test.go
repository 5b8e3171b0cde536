package kvstore_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/testtime"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// slots lists a compiled spec's first n slots after from.
func slots(t *testing.T, s kvstore.Spec, from time.Time, n int) []time.Time {
	t.Helper()
	c, err := compile.Compile(s, "id", nil, nil)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", s, err)
	}
	var out []time.Time
	for at := from; len(out) < n; {
		if at = c.Schedule.Next(at); at.IsZero() {
			break
		}
		out = append(out, at)
	}
	return out
}

// TestIntervalAnchors: the readings of "every N" (issue 13, item 3). A
// spec without align fires as it always did; align "anchor" counts from
// the anchor and "epoch" from the epoch plus a phase, whole days on the
// wall clock of tz.
func TestIntervalAnchors(t *testing.T) {
	paris := testtime.Zone(t, "Europe/Paris")
	from := testtime.Instant(t, "2026-03-20T12:00:00Z")
	monday := testtime.Instant(t, "2026-03-16T09:00:00+01:00")

	t.Run("without align: as before", func(t *testing.T) {
		legacy := kvstore.Spec{Workflow: "wf", Every: "7d", TZ: "Europe/Paris"}
		if got := compile.Plan(legacy); got != "every 7d" {
			t.Errorf("Plan() = %q, want %q", got, "every 7d")
		}
		for _, s := range slots(t, legacy, from, 3) {
			if s.Weekday() != time.Thursday || s.UTC().Hour() != 0 || s.Location() != time.UTC {
				t.Errorf("legacy every 7d fires %v, want Thursday 00:00 UTC as before", s)
			}
		}
		anchored := kvstore.Spec{Workflow: "wf", Every: "90m", Anchor: &monday}
		if got, want := compile.Plan(anchored), "every 90m anchor=2026-03-16T08:00:00Z"; got != want {
			t.Errorf("Plan() = %q, want %q", got, want)
		}
		iv := cronx.Interval{Every: 90 * time.Minute, Anchor: monday}
		for _, s := range slots(t, anchored, from, 5) {
			if want := iv.Next(s.Add(-time.Nanosecond)); !s.Equal(want) {
				t.Errorf("legacy anchored slot %v, Interval says %v", s, want)
			}
		}
	})
	t.Run("align anchor: weekly on the anchor's weekday and time, across DST", func(t *testing.T) {
		s := kvstore.Spec{Workflow: "wf", Every: "7d", TZ: "Europe/Paris", Align: kvstore.AlignAnchor, Anchor: &monday}
		got := slots(t, s, from, 3)
		for i, want := range []string{"2026-03-23T09:00:00+01:00", "2026-03-30T09:00:00+02:00", "2026-04-06T09:00:00+02:00"} {
			if !got[i].Equal(testtime.Instant(t, want)) || got[i].Location().String() != paris.String() {
				t.Fatalf("slots %v, want Mondays 09:00 Paris", got)
			}
		}
		if !strings.Contains(compile.Plan(s), "align=anchor") || !strings.Contains(compile.Plan(s), "tz=Europe/Paris") {
			t.Errorf("Plan() = %q does not name the align and the zone", compile.Plan(s))
		}
	})
	t.Run("align anchor: a part of a day is elapsed time", func(t *testing.T) {
		s := kvstore.Spec{Workflow: "wf", Every: "1d12h", TZ: "Europe/Paris", Align: kvstore.AlignAnchor, Anchor: &monday}
		iv := cronx.Interval{Every: 36 * time.Hour, Anchor: monday}
		for _, got := range slots(t, s, from, 5) {
			if want := iv.Next(got.Add(-time.Nanosecond)); !got.Equal(want) {
				t.Errorf("slot %v, want %v", got, want)
			}
		}
	})
	t.Run("align epoch: local days from 1970-01-01 plus the phase", func(t *testing.T) {
		weekly := kvstore.Spec{Workflow: "wf", Every: "7d", TZ: "Europe/Paris", Align: kvstore.AlignEpoch}
		for _, s := range slots(t, weekly, from, 3) {
			if l := s.In(paris); l.Weekday() != time.Thursday || l.Hour() != 0 {
				t.Errorf("aligned weekly slot %v, want Thursday 00:00 Paris", s)
			}
		}
		daily := kvstore.Spec{Workflow: "wf", Every: "1 day", TZ: "Europe/Paris", Align: kvstore.AlignEpoch, Phase: "9h"}
		for _, s := range slots(t, daily, testtime.Instant(t, "2026-03-28T12:00:00Z"), 3) {
			if l := s.In(paris); l.Hour() != 9 || l.Minute() != 0 {
				t.Errorf("daily with phase 9h: %v", s)
			}
		}
		quarter := kvstore.Spec{Workflow: "wf", Every: "30 minutes", Align: kvstore.AlignEpoch, Phase: "15m"}
		for _, s := range slots(t, quarter, from, 4) {
			if m := s.Minute(); m != 15 && m != 45 || s.Second() != 0 {
				t.Errorf("every 30m with phase 15m: %v", s)
			}
		}
	})
}

// TestIntervalAnchorErrors: align, anchor and phase that do not go
// together name the field.
func TestIntervalAnchorErrors(t *testing.T) {
	at := testtime.Instant(t, "2026-03-16T09:00:00Z")
	for _, c := range []struct {
		name  string
		spec  kvstore.Spec
		field string
	}{
		{"unknown align", kvstore.Spec{Workflow: "wf", Every: "1h", Align: "midnight"}, "align"},
		{"align on a cron", kvstore.Spec{Workflow: "wf", Cron: "* * * * *", Align: kvstore.AlignEpoch}, "align"},
		{"phase without epoch", kvstore.Spec{Workflow: "wf", Every: "1h", Phase: "5m"}, "phase"},
		{"anchor with epoch", kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch, Anchor: &at}, "anchor"},
		{"align anchor, nothing filled in", kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignAnchor}, "anchor"},
		{"bad phase", kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch, Phase: "soon"}, "phase"},
		{"phase below a millisecond", kvstore.Spec{Workflow: "wf", Every: "1h", Align: kvstore.AlignEpoch, Phase: "1.5ms"}, "phase"},
	} {
		err := compile.Validate(c.spec, "a", nil)
		if fe := (*kvstore.FieldError)(nil); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a FieldError on %s", c.name, err, c.field)
		}
	}
}

// TestDefaultHoursKeepTheirPlan: business_hours_only without a calendar
// still means Monday to Friday, 09:00-18:00, and its plan is what it was
// (the canonical form of the default hours), so no schedule re-plans.
// An inline calendar of holidays only now means holidays only: its plan
// changes, and its schedules re-plan (docs/calendar.md, migration).
func TestDefaultHoursKeepTheirPlan(t *testing.T) {
	fp := func(canonical string) string {
		sum := sha256.Sum256([]byte(canonical))
		return hex.EncodeToString(sum[:])
	}
	bho := kvstore.Spec{Workflow: "wf", Cron: "0 2 * * *", BusinessHoursOnly: true}
	c, err := compile.Compile(bho, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := " calendar=" + fp(`{"zone":"UTC","hours":{"mon-fri":["09:00-18:00"]}}`); !strings.HasSuffix(c.Plan, want) {
		t.Errorf("Plan %q, want it to end in %q (as before)", c.Plan, want)
	}
	if got := c.Schedule.Next(testtime.Instant(t, "2026-01-09T12:00:00Z")); !got.Equal(testtime.Instant(t, "2026-01-12T09:00:00Z")) {
		t.Errorf("Friday noon: next %v, want Monday 09:00", got)
	}
	inline := kvstore.Spec{Workflow: "wf", Cron: "0 10 * * *", CalendarInline: json.RawMessage(`{"zone":"UTC","holidays":[{"name":"X","date":"12-25"}]}`)}
	c, err = compile.Compile(inline, "a", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := fp(`{"zone":"UTC","hours":{"mon-fri":["09:00-18:00"]},"holidays":[{"name":"X","date":"12-25"}]}`)
	if strings.HasSuffix(c.Plan, old) {
		t.Errorf("a holidays-only calendar kept its old plan %q", c.Plan)
	}
	if got := c.Schedule.Next(testtime.Instant(t, "2026-01-09T12:00:00Z")); !got.Equal(testtime.Instant(t, "2026-01-10T10:00:00Z")) {
		t.Errorf("holidays only: next %v, want Saturday 10:00", got)
	}
}
