package partition

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
)

func TestScheduleSlots(t *testing.T) {
	base := time.Unix(1_800_000_000, 0) // 1800000000 % 60 == 0
	cases := []struct {
		name     string
		s        schedule
		from, to time.Time
		want     []int64 // seconds after base
	}{
		{"every 1s, half-open", schedule{period: 1}, base, base.Add(3 * time.Second), []int64{0, 1, 2}},
		{"every 1s from mid-second", schedule{period: 1}, base.Add(300 * time.Millisecond), base.Add(3 * time.Second), []int64{1, 2}},
		{"cron 1/4", schedule{period: 4, phase: 1, cron: true}, base, base.Add(10 * time.Second), []int64{1, 5, 9}},
		{"cron 0/6 across a minute", schedule{period: 6, cron: true}, base.Add(50 * time.Second), base.Add(70 * time.Second), []int64{54, 60, 66}},
		{"one-shot inside", schedule{at: base.Add(1500 * time.Millisecond)}, base, base.Add(2 * time.Second), nil},
		{"one-shot at the end is outside", schedule{at: base.Add(2 * time.Second)}, base, base.Add(2 * time.Second), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.s.slots(tc.from, tc.to)
			var want []int64
			for _, s := range tc.want {
				want = append(want, base.Add(time.Duration(s)*time.Second).UnixMilli())
			}
			if tc.s.period == 0 && !tc.s.at.Before(tc.from) && tc.s.at.Before(tc.to) {
				want = []int64{tc.s.at.UnixMilli()}
			}
			if !slices.Equal(got, want) {
				t.Errorf("slots %v, want %v", got, want)
			}
		})
	}
}

// TestCronSpecMatchesGrid: the cron expression of a recurring schedule
// fires exactly on the grid the checker expects, for every phase and
// period (checked against cronx through the spec's compiler).
func TestCronSpecMatchesGrid(t *testing.T) {
	from := time.Unix(1_800_000_000, 0).UTC()
	to := from.Add(3 * time.Minute)
	for _, s := range recurring(2, 20) {
		c, err := compile.Compile(s.spec("wf"), s.id, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", s.id, err)
		}
		var got []int64
		for at := c.Schedule.Next(from.Add(-time.Millisecond)); at.Before(to); at = c.Schedule.Next(at) {
			got = append(got, at.UnixMilli())
		}
		if want := s.slots(from, to); !slices.Equal(got, want) {
			t.Errorf("%s (%+v): spec fires %d slots, checker expects %d", s.id, s.spec("wf"), len(got), len(want))
		}
	}
}

func TestP99(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 200; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if got := p99(d); got != 198*time.Millisecond {
		t.Errorf("p99 of 1..200ms = %s, want 198ms", got)
	}
	if got := p99([]time.Duration{5}); got != 5 {
		t.Errorf("p99 of one = %s", got)
	}
	if got := p99(nil); got != 0 {
		t.Errorf("p99 of none = %s", got)
	}
}

func TestAccount(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	sec := func(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }
	every := schedule{id: "every-0000", period: 1}
	once := schedule{id: "once-x-00", at: sec(1.5)}
	w := window{name: "x", start: base, heal: sec(2), end: sec(4)}
	fires := map[slotKey][]fireRec{
		{every.id, sec(0).UnixMilli()}: {{stored: sec(0.1)}},
		// slot 1 lost
		{every.id, sec(2).UnixMilli()}:  {{stored: sec(5), instance: "s1"}, {stored: sec(5.5), instance: "s2", reason: "takeover"}},
		{every.id, sec(3).UnixMilli()}:  {{stored: sec(2.5), instance: "s3"}}, // early
		{once.id, sec(1.5).UnixMilli()}: {{stored: sec(3)}},
	}
	f := account([]schedule{every, once}, fires, w)
	want := figures{Schedules: 2, Expected: 5, Fired: 4, Duplicates: 1, Lost: 1, Early: 1,
		P99During: 1500 * time.Millisecond, P99After: 3 * time.Second, MaxLate: 3 * time.Second,
		CaughtUp: time.Second, MaxEarly: 500 * time.Millisecond,
		// Stored during the fault [0, 2]: 0.1; after the heal [2, 4]: 2.5, 3.
		StallDuring: 1900 * time.Millisecond, StallAfter: time.Second}
	got := f
	got.lost, got.dups, got.early = nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("figures\n got %+v\nwant %+v", got, want)
	}
	if len(f.lost) != 1 || f.lost[0] != "every-0000.1800000001000" {
		t.Errorf("lost %v", f.lost)
	}
	if len(f.dups) != 1 || f.dups[0] != "every-0000.1800000002000 x2 (s1/fire, s2/takeover)" {
		t.Errorf("dups %v", f.dups)
	}
}

func TestLongestGap(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	at := func(s ...float64) []time.Time {
		var out []time.Time
		for _, x := range s {
			out = append(out, base.Add(time.Duration(x*float64(time.Second))))
		}
		return out
	}
	cases := []struct {
		times    []time.Time
		from, to float64
		want     time.Duration
	}{
		{nil, 0, 5, 5 * time.Second},
		{at(1, 2, 3), 0, 5, 2 * time.Second},
		{at(4, 1, 2), 0, 5, 2 * time.Second},
		{at(-3, 0.5, 9), 0, 5, 4500 * time.Millisecond},
	}
	for _, tc := range cases {
		got := longestGap(tc.times, base.Add(time.Duration(tc.from*float64(time.Second))), base.Add(time.Duration(tc.to*float64(time.Second))))
		if got != tc.want {
			t.Errorf("longestGap(%v, %v, %v) = %s, want %s", tc.times, tc.from, tc.to, got, tc.want)
		}
	}
}
