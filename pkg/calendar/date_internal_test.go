package calendar

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestDateArithmeticMatchesTime holds the integer date arithmetic to the
// time package's normalisation, over years -400 to 10400.
func TestDateArithmeticMatchesTime(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		y, m, d := r.IntN(10800)-400, time.Month(1+r.IntN(12)), 1+r.IntN(31)
		want := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		if got := daysOf(y, m, d); got*secondsPerDay != want.Unix() {
			t.Fatalf("daysOf(%d, %d, %d) = %d, want %d", y, m, d, got, want.Unix()/secondsPerDay)
		}
		dd := dateOf(want)
		if got := dateOfDays(want.Unix() / secondsPerDay); got != dd {
			t.Fatalf("dateOfDays(%s) = %s", dd, got)
		}
		if dd.weekday() != want.Weekday() {
			t.Fatalf("%s: weekday %v, want %v", dd, dd.weekday(), want.Weekday())
		}
		n := r.IntN(2000) - 1000
		if got, want := dd.add(n), dateOf(time.Date(dd.y, dd.m, dd.d+n, 0, 0, 0, 0, time.UTC)); got != want {
			t.Fatalf("%s.add(%d) = %s, want %s", dd, n, got, want)
		}
		k := r.IntN(20) - 10
		if got, want := dd.addYears(k), dateOf(time.Date(dd.y+k, dd.m, dd.d, 0, 0, 0, 0, time.UTC)); got != want {
			t.Fatalf("%s.addYears(%d) = %s, want %s", dd, k, got, want)
		}
		if got, want := daysIn(y, m), time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day(); got != want {
			t.Fatalf("daysIn(%d, %d) = %d, want %d", y, m, got, want)
		}
	}
}
