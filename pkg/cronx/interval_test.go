package cronx_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

func TestIntervalNext(t *testing.T) {
	tests := []struct {
		every  time.Duration
		anchor string // "" means the zero Anchor (Unix epoch)
		after  string
		want   string // "" means the zero time
	}{
		{5 * time.Second, "", "2024-01-01T00:00:02Z", "2024-01-01T00:00:05Z"},
		{5 * time.Second, "", "2024-01-01T00:00:05Z", "2024-01-01T00:00:10Z"},
		{5 * time.Second, "", "2024-01-01T00:00:04.999999999Z", "2024-01-01T00:00:05Z"},
		{24 * time.Hour, "", "2024-01-01T13:00:00Z", "2024-01-02T00:00:00Z"},
		{24 * time.Hour, "", "2024-01-01T13:00:00+09:00", "2024-01-02T00:00:00Z"},
		{90 * time.Minute, "", "2024-01-01T00:00:00Z", "2024-01-01T01:30:00Z"},
		{250 * time.Millisecond, "", "2024-01-01T00:00:00.1Z", "2024-01-01T00:00:00.25Z"},
		{5 * time.Second, "", "1960-01-01T00:00:02Z", "1960-01-01T00:00:05Z"},
		// An anchor sets the phase; it is not a start.
		{time.Hour, "2024-01-01T00:30:00Z", "2024-01-01T00:30:00Z", "2024-01-01T01:30:00Z"},
		{time.Hour, "2024-01-01T00:30:00Z", "2023-12-31T22:00:00Z", "2023-12-31T22:30:00Z"},
		{time.Hour, "2024-01-01T00:30:00Z", "2023-12-31T22:30:00Z", "2023-12-31T23:30:00Z"},
		{time.Hour, "2024-01-01T02:30:00+02:00", "2024-01-01T00:40:00Z", "2024-01-01T01:30:00Z"},
		{7 * 24 * time.Hour, "2024-01-01T09:00:00Z", "2024-03-01T00:00:00Z", "2024-03-04T09:00:00Z"},
		{time.Second, "2024-01-01T00:00:00.123456789Z", "2024-01-01T00:00:10Z", "2024-01-01T00:00:10.123456789Z"},
		// Far from the anchor (the arbitrary-precision path).
		{time.Hour, "0001-01-01T00:00:00.000000001Z", "2023-12-31T23:30:00Z", "2024-01-01T00:00:00.000000001Z"},
		{time.Hour, "9999-01-01T00:00:00Z", "2024-01-01T00:30:00Z", "2024-01-01T01:00:00Z"},
		{1<<63 - 1, "", "2024-01-01T00:00:00Z", "2262-04-11T23:47:16.854775807Z"},
		// Never fires.
		{0, "", "2024-01-01T00:00:00Z", ""},
		{-time.Second, "", "2024-01-01T00:00:00Z", ""},
	}
	for _, tt := range tests {
		iv := cronx.Interval{Every: tt.every}
		if tt.anchor != "" {
			iv.Anchor = ts(t, tt.anchor)
		}
		got := iv.Next(ts(t, tt.after))
		if tt.want == "" {
			if !got.IsZero() {
				t.Errorf("%v.Next(%s) = %v, want the zero time", iv, tt.after, got)
			}
			continue
		}
		if want := ts(t, tt.want); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("%v.Next(%s) = %v, want %v (UTC)", iv, tt.after, got, want)
		}
	}
}

func TestIntervalIgnoresMonotonicClock(t *testing.T) {
	now := time.Now() // carries a monotonic reading
	iv := cronx.Interval{Every: time.Second, Anchor: now}
	got := iv.Next(now)
	if want := now.Round(0).Add(time.Second).UTC(); !got.Equal(want) {
		t.Errorf("Next = %v, want %v", got, want)
	}
}

func TestIntervalString(t *testing.T) {
	tests := []struct {
		iv   cronx.Interval
		want string
	}{
		{cronx.Interval{Every: 5 * time.Second}, "every 5s"},
		{cronx.Interval{Every: 90 * time.Minute}, "every 1h30m"},
		{cronx.Interval{Every: 36 * time.Hour}, "every 1d12h"},
		{cronx.Interval{Every: 1500 * time.Millisecond}, "every 1s500ms"},
		{cronx.Interval{Every: 7*24*time.Hour + time.Second}, "every 7d1s"},
		{cronx.Interval{Every: 1500 * time.Microsecond}, "every 1ms500us"},
		{cronx.Interval{Every: 0}, "every 0s"},
		{cronx.Interval{Every: time.Hour, Anchor: ts(t, "2024-01-01T02:30:00+02:00")}, "every 1h from 2024-01-01T00:30:00Z"},
	}
	for _, tt := range tests {
		if got := tt.iv.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestParseEvery(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"100ms", 100 * time.Millisecond},
		{"500ms", 500 * time.Millisecond},
		{"30s", 30 * time.Second},
		{"90m", 90 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"1.5h", 90 * time.Minute},
		{"7d", 7 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"0.5d", 12 * time.Hour},
		{"1s500ms", 1500 * time.Millisecond},
		{"100000us", 100 * time.Millisecond},
		{" 5s ", 5 * time.Second},
		{"2562047h", 2562047 * time.Hour},
	}
	for _, tt := range tests {
		got, err := cronx.ParseEvery(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseEvery(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		// String round-trips through ParseEvery.
		s := strings.TrimPrefix(cronx.Interval{Every: got}.String(), "every ")
		if back, err := cronx.ParseEvery(s); err != nil || back != got {
			t.Errorf("ParseEvery(%q) (from String) = %v, %v; want %v", s, back, err, got)
		}
	}
}

func TestParseEveryErrors(t *testing.T) {
	tests := []struct{ in, reason string }{
		{"", "empty"},
		{"  ", "empty"},
		{"abc", `expected a number at "abc"`},
		{"5", "at least 100ms"}, // 5 milliseconds
		{"1h30", `missing unit after "30"`},
		{"5x", `unknown unit "x"`},
		{"1 hour 5 parsecs", `unknown unit "parsecs"`},
		{"1h,30m", `expected a number at ",30m"`},
		{"-5s", "positive"},
		{"+", "empty"},
		{"1..5s", `malformed number "1.."`},
		{".s", `expected a number at ".s"`},
		{"1.5", `missing unit after "1.5"`},
		{"0s", "at least 100ms"},
		{"50ms", "at least 100ms"},
		{"99ms", "at least 100ms"},
		{"100.5ms", "whole number of milliseconds"},
		{"1.0001s", "whole number of milliseconds"},
		{"100000001ns", "whole number of milliseconds"},
		{"9999999999999h", "out of range"},
		{"106752d", "out of range"},
		{"2562047h2562047h", "out of range"},
	}
	for _, tt := range tests {
		d, err := cronx.ParseEvery(tt.in)
		if err == nil {
			t.Errorf("ParseEvery(%q) = %v, want an error", tt.in, d)
			continue
		}
		checkParseError(t, "ParseEvery("+tt.in+")", err, "every", 0, tt.reason)
	}
}

func TestIntervalCount(t *testing.T) {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	walk := func(iv cronx.Interval, after, through time.Time) uint64 {
		var n uint64
		for s := iv.Next(after); !s.IsZero() && !s.After(through); s = iv.Next(s) {
			n++
		}
		return n
	}
	for _, tc := range []struct {
		iv             cronx.Interval
		after, through time.Time
	}{
		{cronx.Interval{Every: time.Second}, base, base.Add(10 * time.Second)},
		{cronx.Interval{Every: time.Second}, base.Add(-time.Nanosecond), base.Add(10 * time.Second)},
		{cronx.Interval{Every: 7 * time.Second, Anchor: base.Add(3 * time.Second)}, base.Add(-time.Hour), base.Add(time.Hour)},
		{cronx.Interval{Every: 90 * time.Minute}, base.Add(-48 * time.Hour), base},
		{cronx.Interval{Every: time.Second}, base, base},
		{cronx.Interval{Every: time.Second}, base.Add(time.Second), base},
		{cronx.Interval{Every: 250 * time.Millisecond, Anchor: time.Date(1969, 12, 31, 23, 59, 59, 900e6, time.UTC)}, time.Unix(-5, 0), time.Unix(5, 0)},
	} {
		got, ok := tc.iv.Count(tc.after, tc.through)
		if want := walk(tc.iv, tc.after, tc.through); !ok || got != want {
			t.Errorf("%v Count(%v, %v) = %d, %v; walking Next gives %d", tc.iv, tc.after, tc.through, got, ok, want)
		}
	}
	// Far apart: a century of seconds, exactly.
	far, ok := cronx.Interval{Every: time.Second}.Count(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	if want := uint64(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix() - time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix()); !ok || far != want {
		t.Errorf("century of seconds: %d, want %d", far, want)
	}
}
