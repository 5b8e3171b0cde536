package cronx_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// walkDays lists a schedule's fire times after from, n of them.
func walkDays(s cronx.Schedule, from time.Time, n int) []time.Time {
	var out []time.Time
	for t := from; len(out) < n; {
		if t = s.Next(t); t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// TestDayIntervalWallClock: an interval of whole days keeps its wall-clock
// time across DST changes, in a zone with whole-hour and one with
// half-hour shifts, and a time the gap skips fires when the gap ends.
func TestDayIntervalWallClock(t *testing.T) {
	paris, ny, lh := mustZone(t, "Europe/Paris"), mustZone(t, "America/New_York"), mustZone(t, "Australia/Lord_Howe")
	days := func(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
	for _, c := range []struct {
		name   string
		every  time.Duration
		anchor time.Time
		loc    *time.Location
		from   time.Time
		want   []string
	}{
		{"paris daily across spring forward", days(1), ts(t, "2026-03-27T10:00:00+01:00"), paris, ts(t, "2026-03-27T10:00:00+01:00"),
			[]string{"2026-03-28T10:00:00+01:00", "2026-03-29T10:00:00+02:00", "2026-03-30T10:00:00+02:00"}},
		{"paris weekly on the anchor's monday", days(7), ts(t, "2026-03-16T09:00:00+01:00"), paris, ts(t, "2026-03-17T00:00:00+01:00"),
			[]string{"2026-03-23T09:00:00+01:00", "2026-03-30T09:00:00+02:00", "2026-04-06T09:00:00+02:00"}},
		{"paris daily across fall back", days(1), ts(t, "2026-10-20T23:30:00+02:00"), paris, ts(t, "2026-10-24T12:00:00+02:00"),
			[]string{"2026-10-24T23:30:00+02:00", "2026-10-25T23:30:00+01:00", "2026-10-26T23:30:00+01:00"}},
		{"every 3 days, before the anchor too", days(3), ts(t, "2026-01-10T08:00:00Z"), time.UTC, ts(t, "2026-01-01T00:00:00Z"),
			[]string{"2026-01-01T08:00:00Z", "2026-01-04T08:00:00Z", "2026-01-07T08:00:00Z", "2026-01-10T08:00:00Z"}},
		{"new york gap: when it ends", days(1), ts(t, "2026-03-01T02:30:00-05:00"), ny, ts(t, "2026-03-07T12:00:00-05:00"),
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"new york overlap: the first", days(1), ts(t, "2026-10-01T01:30:00-04:00"), ny, ts(t, "2026-10-31T12:00:00-04:00"),
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"lord howe half-hour gap", days(1), ts(t, "2026-09-01T02:15:00+10:30"), lh, ts(t, "2026-10-03T12:00:00+10:30"),
			[]string{"2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"}},
		{"lord howe half-hour overlap", days(1), ts(t, "2026-03-01T01:45:00+11:00"), lh, ts(t, "2026-04-04T12:00:00+11:00"),
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			di, err := cronx.DaysFrom(c.every, c.anchor, c.loc)
			if err != nil {
				t.Fatal(err)
			}
			got := walkDays(di, c.from, len(c.want))
			for i, w := range c.want {
				if i >= len(got) || !got[i].Equal(ts(t, w)) || got[i].Location() != c.loc {
					t.Fatalf("fire times %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestDayIntervalExplainsTheGap: preview --explain says why a fire moved.
func TestDayIntervalExplainsTheGap(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	di, err := cronx.DaysFrom(24*time.Hour, ts(t, "2026-03-01T02:30:00-05:00"), ny)
	if err != nil {
		t.Fatal(err)
	}
	st := di.Explain(ts(t, "2026-03-07T12:00:00-05:00"))
	if want := "moved: 02:30 does not exist on 2026-03-08 (DST gap); fires when the gap ends"; st.Moved != want {
		t.Errorf("Moved = %q, want %q", st.Moved, want)
	}
	if st := di.Explain(ts(t, "2026-03-08T12:00:00-04:00")); st.Moved != "" {
		t.Errorf("an ordinary day says %q", st.Moved)
	}
}

// TestDaysFromEpoch: the aligned reading counts days from 1970-01-01 in
// the zone's wall clock: every 7d falls on Thursdays, every 1d with a 9h
// phase at 09:00 local, summer and winter.
func TestDaysFromEpoch(t *testing.T) {
	paris := mustZone(t, "Europe/Paris")
	weekly, err := cronx.DaysFromEpoch(7*24*time.Hour, 0, paris)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range walkDays(weekly, ts(t, "2026-03-20T00:00:00Z"), 4) {
		if f.Weekday() != time.Thursday || f.Hour() != 0 || f.Minute() != 0 {
			t.Errorf("aligned weekly fire %v, want Thursday 00:00 in Paris", f)
		}
	}
	daily, err := cronx.DaysFromEpoch(24*time.Hour, 9*time.Hour, paris)
	if err != nil {
		t.Fatal(err)
	}
	got := walkDays(daily, ts(t, "2026-03-28T12:00:00+01:00"), 2)
	if len(got) != 2 || !got[0].Equal(ts(t, "2026-03-29T09:00:00+02:00")) || !got[1].Equal(ts(t, "2026-03-30T09:00:00+02:00")) {
		t.Errorf("daily with a 9h phase: %v", got)
	}
	if _, err := cronx.DaysFromEpoch(36*time.Hour, 0, paris); err == nil {
		t.Error("DaysFromEpoch(36h) accepted a part of a day")
	}
	if _, err := cronx.DaysFrom(0, time.Time{}, paris); err == nil {
		t.Error("DaysFrom(0) accepted")
	}
}

// TestDayIntervalProperties: in UTC a DayInterval is the Interval with the
// same anchor; in any zone, Count equals walking Next, fire times are
// strictly increasing, each fire time is on the wall clock's time of day
// unless a gap moved it, and Next(t-1ns) of a fire time t is t.
func TestDayIntervalProperties(t *testing.T) {
	zones := []*time.Location{time.UTC, mustZone(t, "Europe/Paris"), mustZone(t, "America/New_York"),
		mustZone(t, "Australia/Lord_Howe"), mustZone(t, "America/Havana"), mustZone(t, "Pacific/Apia")}
	r := rand.New(rand.NewSource(7))
	base := ts(t, "2026-01-01T00:00:00Z")
	for range 300 {
		loc := zones[r.Intn(len(zones))]
		every := time.Duration(1+r.Intn(10)) * 24 * time.Hour
		anchor := base.Add(time.Duration(r.Int63n(int64(80 * 365 * 24 * time.Hour)))).Add(-40 * 365 * 24 * time.Hour).Truncate(time.Second)
		di, err := cronx.DaysFrom(every, anchor, loc)
		if err != nil {
			t.Fatal(err)
		}
		from := anchor.Add(time.Duration(r.Int63n(int64(4000*24*time.Hour))) - 2000*24*time.Hour)
		fires := walkDays(di, from, 60)
		if len(fires) != 60 {
			t.Fatalf("%v from %v: %d fire times", di, from, len(fires))
		}
		if loc == time.UTC {
			iv := cronx.Interval{Every: every, Anchor: anchor}
			for i, w := range walkDays(iv, from, 60) {
				if !fires[i].Equal(w) {
					t.Fatalf("%v in UTC: fire %d %v, Interval %v", di, i, fires[i], w)
				}
			}
		}
		prev := from
		for _, f := range fires {
			if !f.After(prev) {
				t.Fatalf("%v: %v after %v", di, f, prev)
			}
			if got := di.Next(f.Add(-time.Nanosecond)); !got.Equal(f) {
				t.Fatalf("%v: Next(%v - 1ns) = %v", di, f, got)
			}
			if st := di.Explain(f.Add(-time.Nanosecond)); st.Moved == "" {
				h, m, s := f.Clock()
				if clock := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second; clock != di.Clock {
					t.Fatalf("%v: fire %v at %v, want %v", di, f, clock, di.Clock)
				}
			}
			prev = f
		}
		a, b := r.Intn(60), r.Intn(60)
		if a > b {
			a, b = b, a
		}
		lo, hi := fires[a].Add(-time.Duration(r.Int63n(int64(time.Hour)))), fires[b]
		want := uint64(b - a + 1)
		if !lo.Before(fires[a]) {
			want--
		}
		if n, ok := di.Count(lo, hi); !ok || n != want {
			t.Fatalf("%v: Count(%v, %v) = %d, %v; want %d", di, lo, hi, n, ok, want)
		}
	}
}

// TestDayIntervalDoesNotAllocate: Next and Count run for every slot.
func TestDayIntervalDoesNotAllocate(t *testing.T) {
	di, err := cronx.DaysFrom(7*24*time.Hour, ts(t, "2026-03-02T09:00:00+01:00"), mustZone(t, "Europe/Paris"))
	if err != nil {
		t.Fatal(err)
	}
	after := ts(t, "2026-03-20T00:00:00Z")
	if n := testing.AllocsPerRun(200, func() { after = di.Next(after) }); n != 0 {
		t.Errorf("%v allocations per Next", n)
	}
	from := ts(t, "2000-01-01T00:00:00Z")
	if n := testing.AllocsPerRun(200, func() { di.Count(from, after) }); n != 0 {
		t.Errorf("%v allocations per Count", n)
	}
}

// TestDayIntervalInvalid: a DayInterval that cannot fire says so.
func TestDayIntervalInvalid(t *testing.T) {
	now := ts(t, "2026-01-01T00:00:00Z")
	for _, di := range []cronx.DayInterval{{}, {Days: 1, Clock: 24 * time.Hour}, {Days: 1, Clock: -1}, {Days: 1, Start: 1 << 41}} {
		if got := di.Next(now); !got.IsZero() {
			t.Errorf("%+v.Next = %v, want zero", di, got)
		}
		if _, ok := di.Count(now, now.Add(time.Hour)); ok {
			t.Errorf("%+v.Count ok", di)
		}
	}
	if got, want := (cronx.DayInterval{Days: 7, Start: 20514, Clock: 9 * time.Hour, Location: mustZone(t, "Europe/Paris")}).String(),
		"every 7d at 09:00 from 2026-03-02 (Europe/Paris)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
