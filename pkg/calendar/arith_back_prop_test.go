package calendar_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// TestBothWaysProperties holds the two directions and the counts to each
// other on every property calendar (DST changes of an hour, half an hour
// and at midnight; split days; holidays): the jumps agree with the
// day-by-day walk (the explanation), counting back from a result gives
// the count, and a step and its inverse return to t rolled.
func TestBothWaysProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 2))
	ctx := context.Background()
	n := 150
	if testing.Short() {
		n = 30
	}
	for _, js := range propertyCalendars {
		c := mustParse(t, js)
		for i := range n {
			from := randomInstant(r)
			d := randomDuration(r)
			if i%10 == 0 {
				d = time.Duration(r.Int64N(int64(365 * 24 * time.Hour))) // up to a year of working time: decades
			}
			back, err := c.AddWorkingContext(ctx, from, -d)
			if err != nil {
				t.Fatalf("%s\nAddWorking(%s, -%v): %v", js, fmtT(from), d, err)
			}
			walked, ex, err := c.AddWorkingExplainContext(ctx, from, -d)
			if err != nil || !walked.Equal(back) {
				t.Fatalf("%s\nAddWorking(%s, -%v) = %s, walked %s, %v", js, fmtT(from), d, fmtT(back), fmtT(walked), err)
			}
			// The explanation's intervals: latest first, inside working
			// time, adding up to d and ending at the result.
			var sum time.Duration
			prev := from
			for _, iv := range ex.Intervals {
				if iv.End.After(prev) || !iv.End.After(iv.Start) || !c.IsWorkingTime(iv.Start) {
					t.Fatalf("%s\nAddWorkingExplain(%s, -%v): interval %s-%s out of order or not working time", js, fmtT(from), d, fmtT(iv.Start), fmtT(iv.End))
				}
				sum += iv.End.Sub(iv.Start)
				prev = iv.Start
			}
			if sum != d || !prev.Equal(back) {
				t.Fatalf("%s\nAddWorkingExplain(%s, -%v): intervals sum to %v, end at %s", js, fmtT(from), d, sum, fmtT(prev))
			}
			if got, err := c.WorkingTimeBetween(ctx, from, back); err != nil || got != -d {
				t.Fatalf("%s\nWorkingTimeBetween(%s, %s) = %v, %v; want -%v", js, fmtT(from), fmtT(back), got, err, d)
			}
			fwd, err := c.AddWorkingContext(ctx, from, d)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := c.WorkingTimeBetween(ctx, from, fwd); err != nil || got != d {
				t.Fatalf("%s\nWorkingTimeBetween(%s, %s) = %v, %v; want %v", js, fmtT(from), fmtT(fwd), got, err, d)
			}
			// Forward then back: the next working start of from.
			start, _ := c.NextWorkingStart(from)
			if again, err := c.AddWorkingContext(ctx, fwd, -d); err != nil || !again.Equal(start) {
				t.Fatalf("%s\nAddWorking(AddWorking(%s, %v) = %s, -%v) = %s, %v; want %s", js, fmtT(from), d, fmtT(fwd), d, fmtT(again), err, fmtT(start))
			}
			// Back then forward: from, or the working time's end before it.
			again, err := c.AddWorkingContext(ctx, back, d)
			if err != nil || again.After(from) {
				t.Fatalf("%s\nAddWorking(AddWorking(%s, -%v) = %s, %v) = %s, %v", js, fmtT(from), d, fmtT(back), d, fmtT(again), err)
			}
			if gap, _ := c.WorkingTimeBetween(ctx, again, from); gap != 0 || (c.IsWorkingTime(from.Add(-1)) && !again.Equal(from)) {
				t.Fatalf("%s\nback and forth from %s gives %s (%v of working time between)", js, fmtT(from), fmtT(again), gap)
			}

			days := r.IntN(40) + 1
			if i%10 == 0 {
				days = r.IntN(5000) + 1
			}
			dback, err := c.AddWorkingDaysContext(ctx, from, -days)
			if err != nil || !dback.Before(from) || !c.IsWorkingDay(dback) {
				t.Fatalf("%s\nAddWorkingDays(%s, -%d) = %s, %v", js, fmtT(from), days, fmtT(dback), err)
			}
			if walked, _, err := c.AddWorkingDaysExplainContext(ctx, from, -days); err != nil || !walked.Equal(dback) {
				t.Fatalf("%s\nAddWorkingDays(%s, -%d) = %s, walked %s, %v", js, fmtT(from), days, fmtT(dback), fmtT(walked), err)
			}
			if got, err := c.WorkingDaysBetween(ctx, from, dback); err != nil || got != -days {
				t.Fatalf("%s\nWorkingDaysBetween(%s, %s) = %d, %v; want -%d", js, fmtT(from), fmtT(dback), got, err, days)
			}
			if got, err := c.WorkingDaysBetween(ctx, dback, from); err != nil || got != days {
				t.Fatalf("%s\nWorkingDaysBetween(%s, %s) = %d, %v; want %d", js, fmtT(dback), fmtT(from), got, err, days)
			}
			dfwd, err := c.AddWorkingDaysContext(ctx, from, days)
			if err != nil {
				t.Fatal(err)
			}
			want := days
			if !c.IsWorkingDay(from) {
				want-- // from's own date does not count
			}
			if got, err := c.WorkingDaysBetween(ctx, from, dfwd); err != nil || got != want {
				t.Fatalf("%s\nWorkingDaysBetween(%s, %s) = %d, %v; want %d", js, fmtT(from), fmtT(dfwd), got, err, want)
			}
			months := r.IntN(30) + 1
			mback, err := c.AddWorkingMonths(from, -months)
			if err != nil || !mback.Before(from) || !c.IsWorkingDay(mback) {
				t.Fatalf("%s\nAddWorkingMonths(%s, -%d) = %s, %v", js, fmtT(from), months, fmtT(mback), err)
			}
		}
	}
}
