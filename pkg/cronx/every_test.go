package cronx_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

func walk(t *testing.T, s cronx.Schedule, after time.Time, n int) []time.Time {
	t.Helper()
	var out []time.Time
	for range n {
		after = s.Next(after)
		if after.IsZero() {
			break
		}
		out = append(out, after)
	}
	return out
}

func equalTimes(t *testing.T, got []time.Time, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d times %v, want %v", len(got), got, want)
	}
	for i := range want {
		if w := ts(t, want[i]); !got[i].Equal(w) {
			t.Fatalf("time %d = %s, want %s", i, got[i].Format(time.RFC3339), want[i])
		}
	}
}

func TestCronStepsAreClockAligned(t *testing.T) {
	after := ts(t, "2026-01-01T10:07:00Z")
	c, err := cronx.NewCron("0 */30 * * * *", cronx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	equalTimes(t, walk(t, c, after, 3), "2026-01-01T10:30:00Z", "2026-01-01T11:00:00Z", "2026-01-01T11:30:00Z")

	c, _ = cronx.NewCron("0 0 */6 * * *", cronx.Options{})
	equalTimes(t, walk(t, c, after, 2), "2026-01-01T12:00:00Z", "2026-01-01T18:00:00Z")

	c, _ = cronx.NewCron("*/20 * * * * *", cronx.Options{})
	equalTimes(t, walk(t, c, after, 2), "2026-01-01T10:07:20Z", "2026-01-01T10:07:40Z")

	// Cron's */2 in day-of-month restarts each month
	// (Jan 31 then Feb 1); Interval is the continuous alternative.
	c, _ = cronx.NewCron("0 0 0 */2 * *", cronx.Options{})
	equalTimes(t, walk(t, c, ts(t, "2026-01-30T12:00:00Z"), 2), "2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z")
	iv := cronx.Interval{Every: 48 * time.Hour, Anchor: ts(t, "2026-01-01T00:00:00Z")}
	equalTimes(t, walk(t, iv, ts(t, "2026-01-30T12:00:00Z"), 2), "2026-01-31T00:00:00Z", "2026-02-02T00:00:00Z")

	c, _ = cronx.NewCron("0 0 0 1 */3 *", cronx.Options{})
	equalTimes(t, walk(t, c, after, 2), "2026-04-01T00:00:00Z", "2026-07-01T00:00:00Z")

	if _, err := cronx.NewCron("0 */0 * * * *", cronx.Options{}); err == nil {
		t.Error("step 0 accepted")
	}
}

func TestDailyCronAcrossTheGap(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	c, err := cronx.NewCron("30 2 * * *", cronx.Options{Location: ny})
	if err != nil {
		t.Fatal(err)
	}
	// The spring-forward day's 02:30 fires when the gap ends.
	equalTimes(t, walk(t, c, ts(t, "2026-03-07T12:00:00-05:00"), 2), "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00")
	if _, err := cronx.NewCron("0 24 * * *", cronx.Options{}); err == nil {
		t.Error("hour 24 accepted")
	}
}

func TestAt(t *testing.T) {
	at := ts(t, "2026-12-31T23:59:00Z")
	equalTimes(t, walk(t, cronx.At(at), ts(t, "2026-01-01T00:00:00Z"), 3), "2026-12-31T23:59:00Z")
}

func TestBounded(t *testing.T) {
	every, _ := cronx.NewCron("0 0 * * * *", cronx.Options{})
	start, end := ts(t, "2026-01-01T10:00:00Z"), ts(t, "2026-01-01T13:00:00Z")

	b, err := cronx.NewBounded(every, start, end, 0)
	if err != nil {
		t.Fatal(err)
	}
	equalTimes(t, walk(t, b, ts(t, "2026-01-01T00:00:00Z"), 10),
		"2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z", "2026-01-01T13:00:00Z")

	b, _ = cronx.NewBounded(every, start, time.Time{}, 3)
	equalTimes(t, walk(t, b, ts(t, "2026-01-01T00:00:00Z"), 10),
		"2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z")
	// Asking from the middle counts from Start, not from the question.
	equalTimes(t, walk(t, b, ts(t, "2026-01-01T11:30:00Z"), 10), "2026-01-01T12:00:00Z")
	if got := b.Next(ts(t, "2026-01-01T12:00:00Z")); !got.IsZero() {
		t.Fatalf("fourth run %v, want none", got)
	}

	for _, bad := range []struct {
		start, end time.Time
		count      int
	}{
		{time.Time{}, time.Time{}, 3}, // a count needs a start
		{start, start.Add(-time.Hour), 0},
		{start, end, -1},
	} {
		if _, err := cronx.NewBounded(every, bad.start, bad.end, bad.count); err == nil {
			t.Errorf("NewBounded(%v, %v, %d) accepted", bad.start, bad.end, bad.count)
		}
	}
}

// A limit counted from a start long ago costs no walk for an interval
// (it once walked every slot since the start, in the scheduler's loop).
func TestBoundedIntervalCountsWithoutWalking(t *testing.T) {
	start := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 11, 30, 12, 0, 0, 50e6, time.UTC)
	// 1900 to 2026 is about 4.0e9 seconds: a limit of 5e9 fires has not
	// run out, one of 3e9 ran out around 1995.
	b, err := cronx.NewBounded(cronx.Interval{Every: time.Second}, start, time.Time{}, 5_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Next(now), now.Truncate(time.Second).Add(time.Second); !got.Equal(want) {
		t.Fatalf("Next = %v, want %v", got, want)
	}
	ran, err := cronx.NewBounded(cronx.Interval{Every: time.Second}, start, time.Time{}, 3_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if got := ran.Next(now); !got.IsZero() {
		t.Fatalf("a limit that ran out in 1995: Next = %v, want none", got)
	}
	b2, err := cronx.NewBounded(cronx.Interval{Every: time.Second}, start, time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := b2.Next(start.Add(9 * time.Second)); !got.IsZero() {
		t.Fatalf("after the 10th slot: %v, want none", got)
	}
	if got, want := b2.Next(start.Add(8*time.Second)), start.Add(9*time.Second); !got.Equal(want) {
		t.Fatalf("the 10th slot: %v, want %v", got, want)
	}
}
