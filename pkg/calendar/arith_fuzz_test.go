package calendar

import (
	"math/rand/v2"
	"testing"
	"time"
)

// FuzzAddWorkingMatchesWalk holds AddWorking and AddWorkingDays to the
// reference walks on calendars, starts and counts drawn from the fuzzed
// seed (see genCalendar): the fuzzer explores the generator's space.
func FuzzAddWorkingMatchesWalk(f *testing.F) {
	for _, s := range []uint64{0, 1, 52, 1 << 40, 12345678901} {
		f.Add(s, uint64(s*7+1))
	}
	f.Fuzz(func(t *testing.T, seed, stream uint64) {
		r := rand.New(rand.NewPCG(seed, stream))
		js := genCalendar(r, "")
		c, err := Parse([]byte(js))
		if err != nil {
			t.Fatalf("the generator made a bad calendar: %v\n%s", err, js)
		}
		from := genInstant(r)
		if r.IntN(4) == 0 { // start near a change of offset
			if _, end := from.In(c.loc).ZoneBounds(); !end.IsZero() {
				from = end.Add(time.Duration(r.IntN(7201)-3600) * time.Second)
			}
		}
		checkWorkingMatchesWalk(t, js, c, from, genCount(r, c))
		checkDaysMatchesWalk(t, js, c, from, genDays(r, c))
	})
}
