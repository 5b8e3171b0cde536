package cronx_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// TestParseDurationForms: the forms users of the seeds write, each one
// duration however it is spelled (issue 13, item 2).
func TestParseDurationForms(t *testing.T) {
	const day = 24 * time.Hour
	for _, c := range []struct {
		in        string
		want      time.Duration
		canonical string
	}{
		{"3600000", time.Hour, "1h"},
		{"1 h", time.Hour, "1h"},
		{"1h", time.Hour, "1h"},
		{"2 hours", 2 * time.Hour, "2h"},
		{"1 hour", time.Hour, "1h"},
		{"1 day", day, "1d"},
		{"1 day 3 hours", day + 3*time.Hour, "1d3h"},
		{"1 d 3 h", day + 3*time.Hour, "1d3h"},
		{"90 minutes", 90 * time.Minute, "1h30m"},
		{"1d12h", 36 * time.Hour, "1d12h"},
		{"7d", 7 * day, "7d"},
		{"30s", 30 * time.Second, "30s"},
		{"500ms", 500 * time.Millisecond, "500ms"},
		{"1.5h", 90 * time.Minute, "1h30m"},
		{".5d", 12 * time.Hour, "12h"},
		{"1h 30m 10s", time.Hour + 30*time.Minute + 10*time.Second, "1h30m10s"},
		{"  2 HOURS  ", 2 * time.Hour, "2h"},
		{"1 Day 2 Hrs 3 mins 4 secs 5 msecs", day + 2*time.Hour + 3*time.Minute + 4*time.Second + 5*time.Millisecond, "1d2h3m4s5ms"},
		{"250 milliseconds", 250 * time.Millisecond, "250ms"},
		{"1 second", time.Second, "1s"},
		{"2 µs", 2 * time.Microsecond, "2us"},
		{"1.5us", 1500 * time.Nanosecond, "1us500ns"},
		{"+10s", 10 * time.Second, "10s"},
		{"+1500", 1500 * time.Millisecond, "1s500ms"},
		{"0", 0, "0s"},
		{"0h 0m", 0, "0s"},
		{"1h1h", 2 * time.Hour, "2h"},
		{"2562047h", 2562047 * time.Hour, "106751d23h"},
	} {
		got, err := cronx.ParseDuration(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
			continue
		}
		if s := cronx.FormatDuration(got); s != c.canonical {
			t.Errorf("FormatDuration(%v) = %q, want %q", got, s, c.canonical)
		}
	}
}

// TestParseDurationErrors: each error names the token that is wrong.
func TestParseDurationErrors(t *testing.T) {
	for _, c := range []struct{ in, reason string }{
		{"", "empty duration"},
		{"   ", "empty duration"},
		{"soon", `expected a number at "soon"`},
		{"1 x", `unknown unit "x"`},
		{"2 hours 5 fortnights", `unknown unit "fortnights"`},
		{"1h 30", `missing unit after "30"`},
		{"1 day and 3 hours", `expected a number at "and 3 hours"`},
		{"1h x", `expected a number at "x"`},
		{"1..5s", `malformed number "1.."`},
		{"-5m", "negative duration"},
		{"99999999999999999999", `"99999999999999999999" milliseconds is out of range`},
		{"2562048h", `"2562048h" is out of range`},
		{"106752 days", `"106752 days" is out of range`},
		{"2562047h 2562047h", "out of range"},
	} {
		_, err := cronx.ParseDuration(c.in)
		checkParseError(t, "ParseDuration("+c.in+")", err, "duration", 0, c.reason)
	}
}

// TestParseEveryGrammar: every takes the whole grammar, with its own
// bounds (at least 100ms, whole milliseconds).
func TestParseEveryGrammar(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"3600000": time.Hour, "1 h": time.Hour, "2 hours": 2 * time.Hour, "1 day 3 hours": 27 * time.Hour,
		"90 minutes": 90 * time.Minute, "1d12h": 36 * time.Hour, "1 d 3 h": 27 * time.Hour, "100": 100 * time.Millisecond,
	} {
		if got, err := cronx.ParseEvery(in); err != nil || got != want {
			t.Errorf("ParseEvery(%q) = %v, %v; want %v", in, got, err, want)
		}
		// "@every" reads the same grammar.
		s, err := cronx.Parse("@every "+in, cronx.Options{})
		if err != nil || s.(cronx.Interval).Every != want {
			t.Errorf("Parse(@every %s) = %v, %v; want every %v", in, s, err, want)
		}
	}
	for in, reason := range map[string]string{"99": "at least 100ms", "100.5ms": "whole number of milliseconds", "2 weeks": `unknown unit "weeks"`,
		"30": "30 is 30ms: a bare number is milliseconds; at least 100ms; did you mean 30s?"} {
		_, err := cronx.ParseEvery(in)
		checkParseError(t, "ParseEvery("+in+")", err, "every", 0, reason)
	}
}

// randomDurationText writes d in a random spelling of the grammar: the
// units split into parts (some repeated), unit names as symbols, words
// or abbreviations in any case, with and without spaces; or d as bare
// milliseconds.
func randomDurationText(r *rand.Rand, d time.Duration) string {
	if d%time.Millisecond == 0 && r.Intn(5) == 0 {
		return fmt.Sprint(int64(d / time.Millisecond))
	}
	spellings := []struct {
		size  time.Duration
		names []string
	}{
		{24 * time.Hour, []string{"d", "day", "days", "D", "Days"}},
		{time.Hour, []string{"h", "hr", "hrs", "hour", "hours", "H", "HOURS"}},
		{time.Minute, []string{"m", "min", "mins", "minute", "minutes", "M"}},
		{time.Second, []string{"s", "sec", "secs", "second", "seconds", "S"}},
		{time.Millisecond, []string{"ms", "msec", "millisecond", "milliseconds", "MS"}},
		{time.Microsecond, []string{"us", "µs", "usec", "microseconds"}},
		{time.Nanosecond, []string{"ns", "nsec", "nanoseconds"}},
	}
	var parts []string
	for _, u := range spellings {
		n := d / u.size
		d -= n * u.size
		for n > 0 {
			v := n
			if r.Intn(4) == 0 && n > 1 {
				v = 1 + time.Duration(r.Int63n(int64(n))) // split into two parts
			}
			n -= v
			sep := ""
			if r.Intn(2) == 0 {
				sep = " "
			}
			parts = append(parts, fmt.Sprint(int64(v))+sep+u.names[r.Intn(len(u.names))])
		}
	}
	if len(parts) == 0 {
		return "0s"
	}
	r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	join := ""
	if r.Intn(2) == 0 {
		join = " "
	}
	return strings.Join(parts, join)
}

// TestDurationRoundTrip is the property of the grammar: every spelling of
// a duration parses to it, and its canonical string (FormatDuration, which
// Interval.String writes) parses back to it. Intervals valid for every
// also survive ParseEvery.
func TestDurationRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	for range 20000 {
		var d time.Duration
		switch r.Intn(3) {
		case 0:
			d = time.Duration(r.Int63n(int64(400 * 24 * time.Hour)))
		case 1:
			d = time.Duration(r.Int63n(int64(48*time.Hour/time.Millisecond))) * time.Millisecond
		default:
			d = time.Duration(r.Int63())
		}
		text := randomDurationText(r, d)
		got, err := cronx.ParseDuration(text)
		if err != nil || got != d {
			t.Fatalf("ParseDuration(%q) = %v, %v; want %v", text, got, err, d)
		}
		canonical := cronx.FormatDuration(d)
		if back, err := cronx.ParseDuration(canonical); err != nil || back != d {
			t.Fatalf("ParseDuration(FormatDuration(%v) = %q) = %v, %v", d, canonical, back, err)
		}
		if d >= 100*time.Millisecond && d%time.Millisecond == 0 {
			s := strings.TrimPrefix(cronx.Interval{Every: d}.String(), "every ")
			if back, err := cronx.ParseEvery(s); err != nil || back != d || s != canonical {
				t.Fatalf("ParseEvery(%q) (Interval.String) = %v, %v; want %v", s, back, err, d)
			}
			if back, err := cronx.ParseEvery(text); err != nil || back != d {
				t.Fatalf("ParseEvery(%q) = %v, %v; want %v", text, back, err, d)
			}
		}
	}
}

// FuzzParseDuration: whatever parses formats to a canonical string that
// parses to the same duration, and that string is a fixed point.
func FuzzParseDuration(f *testing.F) {
	for _, seed := range []string{"3600000", "1 h", "2 hours", "1 day 3 hours", "90 minutes", "1d12h",
		"1 d 3 h", "1.5h", ".5d", "+10s", "1h x", "1..5s", "-5m", "99999999999999999999", "2 µs", "0", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := cronx.ParseDuration(s)
		if err != nil {
			return
		}
		canonical := cronx.FormatDuration(d)
		back, err := cronx.ParseDuration(canonical)
		if err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v; its canonical %q parses to %v, %v", s, d, canonical, back, err)
		}
		if again := cronx.FormatDuration(back); again != canonical {
			t.Fatalf("canonical %q formats again as %q", canonical, again)
		}
	})
}
