package cronx_test

import (
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

func TestCronNextUTC(t *testing.T) {
	tests := []struct {
		expr  string
		after string
		want  string // "" means the zero time
	}{
		{"*/15 * * * *", "2024-01-01T00:00:00Z", "2024-01-01T00:15:00Z"},
		{"*/15 * * * *", "2024-01-01T00:14:59.999Z", "2024-01-01T00:15:00Z"},
		{"0 * * * *", "2024-01-01T10:00:00Z", "2024-01-01T11:00:00Z"},
		{"0 * * * *", "2024-01-01T09:59:59.999999999Z", "2024-01-01T10:00:00Z"},
		{"05 08 * * *", "2024-01-01T00:00:00Z", "2024-01-01T08:05:00Z"},
		{"0 9 * * MON-FRI", "2024-01-05T09:00:00Z", "2024-01-08T09:00:00Z"},
		{"0 9 * * mon-fri", "2024-01-06T00:00:00Z", "2024-01-08T09:00:00Z"},
		{"0 0 1 1 *", "2024-06-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{"0 0 1 jan,JUL *", "2024-01-01T00:00:00Z", "2024-07-01T00:00:00Z"},
		{"0 0 29 2 *", "2024-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		{"0 0 31 * *", "2024-01-31T00:00:00Z", "2024-03-31T00:00:00Z"},
		{"0 12 10-20/5 * *", "2024-01-10T12:00:00Z", "2024-01-15T12:00:00Z"},
		{"0 12 25/3 * *", "2024-01-31T12:00:00Z", "2024-02-25T12:00:00Z"},
		{"0 0 * * * ?", "2024-01-01T00:00:00Z", "2024-01-01T01:00:00Z"},
		// Day-of-week 7 and ranges ending in 7 or SUN include Sunday.
		// 2024-01-06 is a Saturday.
		{"0 0 * * 7", "2024-01-01T00:00:00Z", "2024-01-07T00:00:00Z"},
		{"0 0 * * 5-7", "2024-01-06T12:00:00Z", "2024-01-07T00:00:00Z"},
		{"0 0 * * 6-7", "2024-01-06T12:00:00Z", "2024-01-07T00:00:00Z"},
		{"0 0 * * fri-sun", "2024-01-06T12:00:00Z", "2024-01-07T00:00:00Z"},
		{"0 0 * * 1-7/2", "2024-01-05T12:00:00Z", "2024-01-07T00:00:00Z"},
		{"0 0 * * 7-7", "2024-01-01T00:00:00Z", "2024-01-07T00:00:00Z"},
		{"0 0 * * 5-7", "2024-01-07T12:00:00Z", "2024-01-12T00:00:00Z"},
		// Day-of-month and day-of-week both restricted: either matches.
		{"0 0 13 * 5", "2024-01-01T00:00:00Z", "2024-01-05T00:00:00Z"},
		{"0 0 13 * 5", "2024-01-12T00:00:00Z", "2024-01-13T00:00:00Z"},
		// Six fields: seconds first.
		{"30 */2 * * * *", "2024-01-01T00:00:00Z", "2024-01-01T00:00:30Z"},
		{"30 */2 * * * *", "2024-01-01T00:00:30Z", "2024-01-01T00:02:30Z"},
		{"0 0 12 * * *", "2024-01-01T00:00:00Z", "2024-01-01T12:00:00Z"},
		{"* * * * * *", "2024-01-01T10:00:00.5Z", "2024-01-01T10:00:01Z"},
		{"* * * * * *", "2024-01-01T10:00:01Z", "2024-01-01T10:00:02Z"},
		{"0,10-12,45 0 0 * * *", "2024-01-01T00:00:10Z", "2024-01-01T00:00:11Z"},
		// Aliases.
		{"@hourly", "2024-01-01T10:20:00Z", "2024-01-01T11:00:00Z"},
		{"@daily", "2024-01-01T10:20:00Z", "2024-01-02T00:00:00Z"},
		{"@midnight", "2024-01-01T10:20:00Z", "2024-01-02T00:00:00Z"},
		{"@DAILY", "2024-01-01T10:20:00Z", "2024-01-02T00:00:00Z"},
		{"@weekly", "2024-01-01T10:20:00Z", "2024-01-07T00:00:00Z"},
		{"@monthly", "2024-01-01T10:20:00Z", "2024-02-01T00:00:00Z"},
		{"@yearly", "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"},
		{"@annually", "2023-12-31T23:59:59Z", "2024-01-01T00:00:00Z"},
		// The engine's year range: 1970 through 2099.
		{"0 0 1 1 *", "1960-06-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"0 0 * * *", "0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"0 0 1 1 *", "2099-01-01T00:00:00Z", "2100-01-01T00:00:00Z"},
		{"0 0 1 1 *", "2199-01-01T00:00:00Z", ""},
		{"0 0 1 1 *", "2250-01-01T00:00:00Z", ""},
	}
	for _, tt := range tests {
		c, err := cronx.NewCron(tt.expr, cronx.Options{})
		if err != nil {
			t.Errorf("NewCron(%q): %v", tt.expr, err)
			continue
		}
		after := ts(t, tt.after)
		got := c.Next(after)
		if tt.want == "" {
			if !got.IsZero() {
				t.Errorf("%q.Next(%s) = %s, want zero time", tt.expr, tt.after, got)
			}
			continue
		}
		if want := ts(t, tt.want); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("%q.Next(%s) = %s, want %s (UTC)", tt.expr, tt.after, got, want)
		}
	}
}

// TestCronNextZones checks evaluation in a zone, including the wall-clock
// policy at daylight-saving transitions: times in a gap are skipped, times
// in an overlap fire once per UTC offset.
func TestCronNextZones(t *testing.T) {
	tests := []struct {
		zone, expr string
		after      string
		want       []string // consecutive fire times
	}{
		{"America/New_York", "0 9 * * *", "2024-07-01T00:00:00Z",
			[]string{"2024-07-01T09:00:00-04:00", "2024-07-02T09:00:00-04:00"}},
		{"America/New_York", "0 9 * * *", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T09:00:00-05:00"}},
		// Spring forward 2024-03-10 02:00 EST -> 03:00 EDT.
		{"America/New_York", "30 2 * * *", "2024-03-09T12:00:00-05:00",
			[]string{"2024-03-10T03:00:00-04:00", "2024-03-11T02:30:00-04:00"}},
		{"America/New_York", "0 * * * *", "2024-03-10T00:30:00-05:00",
			[]string{"2024-03-10T01:00:00-05:00", "2024-03-10T03:00:00-04:00", "2024-03-10T04:00:00-04:00"}},
		{"America/New_York", "59 1 * * *", "2024-03-10T00:00:00-05:00",
			[]string{"2024-03-10T01:59:00-05:00", "2024-03-11T01:59:00-04:00"}},
		{"America/New_York", "0 3 * * *", "2024-03-10T01:59:00-05:00",
			[]string{"2024-03-10T03:00:00-04:00"}},
		// Fall back 2024-11-03 02:00 EDT -> 01:00 EST.
		{"America/New_York", "30 1 * * *", "2024-11-03T00:00:00-04:00",
			[]string{"2024-11-03T01:30:00-04:00", "2024-11-04T01:30:00-05:00"}},
		{"America/New_York", "0 * * * *", "2024-11-03T00:30:00-04:00",
			[]string{"2024-11-03T01:00:00-04:00", "2024-11-03T01:00:00-05:00", "2024-11-03T02:00:00-05:00"}},
		{"America/New_York", "0 0 2 * * *", "2024-11-03T00:30:00-04:00",
			[]string{"2024-11-03T02:00:00-05:00"}},
		// Europe/London: 2024-03-31 01:00 GMT -> 02:00 BST,
		// 2024-10-27 02:00 BST -> 01:00 GMT.
		{"Europe/London", "0 9 * * *", "2024-06-01T00:00:00Z",
			[]string{"2024-06-01T09:00:00+01:00"}},
		{"Europe/London", "30 1 * * *", "2024-03-30T12:00:00Z",
			[]string{"2024-03-31T02:00:00+01:00", "2024-04-01T01:30:00+01:00"}},
		{"Europe/London", "30 1 * * *", "2024-10-26T12:00:00Z",
			[]string{"2024-10-27T01:30:00+01:00", "2024-10-28T01:30:00Z"}},
		{"Europe/London", "@daily", "2024-10-26T12:00:00Z",
			[]string{"2024-10-27T00:00:00+01:00", "2024-10-28T00:00:00Z"}},
		// America/Havana changes at midnight, which makes cronexpr's own
		// daylight-saving code loop forever; 2024-03-10 00:00 CST -> 01:00
		// CDT and 2024-11-03 01:00 CDT -> 00:00 CST.
		{"America/Havana", "0 0 * * *", "2024-03-09T12:00:00-05:00",
			[]string{"2024-03-10T01:00:00-04:00", "2024-03-11T00:00:00-04:00"}},
		{"America/Havana", "0 0 * * *", "2024-11-02T12:00:00-04:00",
			[]string{"2024-11-03T00:00:00-04:00", "2024-11-04T00:00:00-05:00"}},
		{"America/Havana", "0 0 1 * *", "2001-03-08T23:16:26-05:00",
			[]string{"2001-04-01T01:00:00-04:00"}},
		// Past 2037 Go derives New York's transitions from its rule; during
		// the last UTC day of a leap year time.Time.ZoneBounds reports a
		// stale end, which once made Next loop forever.
		{"America/New_York", "*/7 * * * *", "2048-12-30T20:27:26.04935364-05:00",
			[]string{"2048-12-30T20:28:00-05:00", "2048-12-30T20:35:00-05:00"}},
		{"America/New_York", "*/7 * * * *", "2048-12-31T10:00:00Z",
			[]string{"2048-12-31T05:07:00-05:00"}},
		{"America/New_York", "30 19 31 12 *", "2048-12-31T12:00:00Z",
			[]string{"2048-12-31T19:30:00-05:00", "2049-12-31T19:30:00-05:00"}},
		{"America/New_York", "0 0 * * *", "2048-12-30T12:00:00-05:00",
			[]string{"2048-12-31T00:00:00-05:00", "2049-01-01T00:00:00-05:00"}},
		{"America/New_York", "0 * * * *", "2052-03-10T00:30:00-05:00",
			[]string{"2052-03-10T01:00:00-05:00", "2052-03-10T03:00:00-04:00"}},
		// Australia/Lord_Howe moves by 30 minutes: 2024-10-06 02:00 -> 02:30.
		{"Australia/Lord_Howe", "30 2 * * *", "2024-10-06T00:00:00+10:30",
			[]string{"2024-10-06T02:30:00+11:00"}},
		{"Australia/Lord_Howe", "15 2 * * *", "2024-10-06T00:00:00+10:30",
			[]string{"2024-10-06T02:30:00+11:00", "2024-10-07T02:15:00+11:00"}},
	}
	for _, tt := range tests {
		loc := mustZone(t, tt.zone)
		c, err := cronx.NewCron(tt.expr, cronx.Options{Location: loc})
		if err != nil {
			t.Errorf("NewCron(%q): %v", tt.expr, err)
			continue
		}
		after := ts(t, tt.after)
		for _, w := range tt.want {
			got := c.Next(after)
			want := ts(t, w)
			if !got.Equal(want) || got.Location() != loc {
				t.Errorf("%s %q: Next(%s) = %s, want %s in %s", tt.zone, tt.expr, after, got, want, loc)
				break
			}
			after = got
		}
	}
}

func TestCronAccessors(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	c, err := cronx.NewCron("  */5\t *  * * MON  ", cronx.Options{Location: ny})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.String(), "*/5 * * * MON"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if c.Location() != ny {
		t.Errorf("Location() = %v, want %v", c.Location(), ny)
	}
	a, err := cronx.NewCron("@Daily", cronx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.String() != "@Daily" || a.Location() != time.UTC {
		t.Errorf("alias: String() = %q, Location() = %v", a.String(), a.Location())
	}

	var zero cronx.Cron
	if got := zero.Next(time.Now()); !got.IsZero() {
		t.Errorf("zero Cron fired at %v", got)
	}
	if zero.String() != "" || zero.Location() != time.UTC {
		t.Errorf("zero Cron: String() = %q, Location() = %v", zero.String(), zero.Location())
	}
	var nilCron *cronx.Cron
	if got := nilCron.Next(time.Now()); !got.IsZero() {
		t.Errorf("nil Cron fired at %v", got)
	}
}

// TestCronConcurrentNext is meant for the race detector: cronexpr keeps
// scratch state in its Expression, which Cron must not share.
func TestCronConcurrentNext(t *testing.T) {
	c, err := cronx.NewCron("0 0 1,15,31 * *", cronx.Options{Location: mustZone(t, "Europe/London")})
	if err != nil {
		t.Fatal(err)
	}
	base := ts(t, "2024-01-01T00:00:00Z")
	want := make([]time.Time, 12)
	for i := range want {
		want[i] = c.Next(base.AddDate(0, i, 3))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 200; n++ {
				i := (g + n) % len(want)
				if got := c.Next(base.AddDate(0, i, 3)); !got.Equal(want[i]) {
					t.Errorf("concurrent Next = %v, want %v", got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestSchedulesAsInterface(t *testing.T) {
	c, err := cronx.NewCron("@hourly", cronx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	after := ts(t, "2024-01-01T00:30:00Z")
	for _, s := range []cronx.Schedule{c, cronx.Interval{Every: time.Hour}, cronx.Once{At: ts(t, "2024-01-01T01:00:00Z")}} {
		if got, want := s.Next(after), ts(t, "2024-01-01T01:00:00Z"); !got.Equal(want) {
			t.Errorf("%v.Next = %v, want %v", s, got, want)
		}
	}
}
