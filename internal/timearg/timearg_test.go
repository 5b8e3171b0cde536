package timearg_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/timearg"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		// Go's forms stay accepted.
		{"0", 0}, {"0s", 0}, {"90s", 90 * time.Second}, {"1h30m", 90 * time.Minute}, {"1.5h", 90 * time.Minute},
		{"300ms", 300 * time.Millisecond}, {"2us", 2 * time.Microsecond}, {"2µs", 2 * time.Microsecond},
		{"5ns", 5}, {"+5s", 5 * time.Second}, {"1h0m0s", time.Hour}, {"168h0m0s", 7 * 24 * time.Hour},
		// And the grammar's.
		{"2 hours", 2 * time.Hour}, {"1d 3h", 27 * time.Hour}, {"1 day 3 hours", 27 * time.Hour}, {" 7d ", 7 * 24 * time.Hour},
	} {
		got, err := timearg.ParseDuration(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"2 horus", `unknown unit "horus"; want ms, s, m, h or d, or a word such as seconds, minutes, hours, days (e.g. 90s, 2 hours, 1d 3h)`},
		{"30", "a bare number needs a unit here; did you mean 30s or 30m? (e.g. 90s, 2 hours, 1d 3h)"},
		{"-5s", "negative duration"},
		{"", "empty duration"},
		{"soon", `expected a number at "soon"`},
	} {
		_, err := timearg.ParseDuration(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseDuration(%q) = %v; want an error containing %q", c.in, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "time:") || strings.Contains(err.Error(), "strconv")) {
			t.Errorf("ParseDuration(%q): %v speaks Go's internals", c.in, err)
		}
	}
}

func TestParseSignedDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"-30s": -30 * time.Second, "30s": 30 * time.Second, "- 2 hours": -2 * time.Hour} {
		if got, err := timearg.ParseSignedDuration(in); err != nil || got != want {
			t.Errorf("ParseSignedDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"now", now}, {"NOW", now}, {"now+2h", now.Add(2 * time.Hour)}, {"now-30m", now.Add(-30 * time.Minute)},
		{"now + 1 day 3 hours", now.Add(27 * time.Hour)},
		{"2026-12-01T09:00:00Z", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)},
		{"2026-12-01T09:00:00.5+01:00", time.Date(2026, 12, 1, 8, 0, 0, 5e8, time.UTC)},
	} {
		got, err := timearg.ParseTime(c.in, now)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"tomorrow", "want an RFC 3339 time or now+DURATION (e.g. 2026-12-01T09:00:00Z, now+2h, now-30m)"},
		{"now*2", "want now, now+DURATION or now-DURATION"},
		{"now+2 horus", `unknown unit "horus"`},
		{"2026-13-01T00:00:00Z", "want an RFC 3339 time"},
	} {
		_, err := timearg.ParseTime(c.in, now)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTime(%q) = %v; want an error containing %q", c.in, err, c.want)
		}
	}
}
