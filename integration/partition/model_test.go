package partition

// The workload and its accounting. Every schedule's slots are known in
// advance from its definition, computed here independently of the
// scheduler (whole seconds for "every 1s", second-of-minute grids for the
// cron schedules, one instant for a one-shot), so the checker counts what
// was owed, not what happened to fire.

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// schedule is one schedule of the workload.
type schedule struct {
	id string
	// Recurring schedules fire at every unix second s with
	// s % period == phase; period divides 60, so the same grid is a cron
	// seconds field "phase/period".
	period, phase int64
	cron          bool
	// at is a one-shot's slot (period 0).
	at time.Time
}

// Every schedule catches up every missed slot (fire_all) within 10 minutes,
// and counts a slot as late after 2s instead of the default minute, so the
// outages of the nemeses exercise the catch-up path: a slot may be late,
// but never missing or doubled.
func (s schedule) spec(workflow string) kvstore.Spec {
	sp := kvstore.Spec{Workflow: workflow, Misfire: kvstore.MisfireFireAll, CatchupWindow: "10m", MisfireThreshold: "2s"}
	switch {
	case s.period == 0:
		at := s.at.UTC()
		sp.At = &at
	case s.cron:
		sp.Cron = fmt.Sprintf("%d/%d * * * * *", s.phase, s.period)
	default:
		sp.Every = fmt.Sprintf("%ds", s.period)
	}
	return sp
}

// slots are the schedule's slots in [from, to), as unix milliseconds.
func (s schedule) slots(from, to time.Time) []int64 {
	if s.period == 0 {
		if !s.at.Before(from) && s.at.Before(to) {
			return []int64{s.at.UnixMilli()}
		}
		return nil
	}
	var out []int64
	first := from.Unix()
	if from.After(time.Unix(first, 0)) {
		first++ // the next whole second
	}
	for sec := first; time.Unix(sec, 0).Before(to); sec++ {
		if sec%s.period == s.phase {
			out = append(out, sec*1000)
		}
	}
	return out
}

// recurring is the workload's recurring schedules: every "every 1s", then
// crons on 2-6 second grids with every phase.
func recurring(every, crons int) []schedule {
	var out []schedule
	for i := range every {
		out = append(out, schedule{id: fmt.Sprintf("every-%04d", i), period: 1})
	}
	periods := []int64{2, 3, 4, 5, 6}
	for i := range crons {
		p := periods[i%len(periods)]
		out = append(out, schedule{id: fmt.Sprintf("cron-%04d", i), period: p, phase: int64(i/len(periods)) % p, cron: true})
	}
	return out
}

// oneShots are n one-shots named for a nemesis, due at even steps in
// [from, to), on whole milliseconds.
func oneShots(name string, n int, from, to time.Time) []schedule {
	out := make([]schedule, n)
	step := to.Sub(from) / time.Duration(n+1)
	for i := range out {
		out[i] = schedule{id: fmt.Sprintf("once-%s-%02d", name, i), at: from.Add(step * time.Duration(i+1)).Truncate(time.Millisecond)}
	}
	return out
}

// fireRec is one fire message as the stream stored it.
type fireRec struct {
	stored   time.Time // the stream's timestamp
	instance string    // Sched-Instance
	reason   string    // Sched-Reason
}

// slotKey names a slot: schedule id and slot time.
type slotKey struct {
	id string
	ms int64
}

// window is one nemesis in time: fault from start to heal, then recovery
// until end. Its slots are those scheduled in [start, end).
type window struct {
	name             string
	start, heal, end time.Time
}

// figures are what a window's slots did.
type figures struct {
	Schedules  int
	Expected   int // slots owed in the window
	Fired      int // of those, with at least one fire message
	Duplicates int // messages beyond the first of a slot
	Lost       int // owed slots with no message
	Early      int // fires stored before their slot's time
	// Lateness (stored minus slot time) at the 99th percentile for slots
	// due during the fault and after the heal, and the worst.
	P99During, P99After, MaxLate time.Duration
	// CaughtUp is how long after the heal the last slot due before the
	// heal was fired (0 when none was left behind).
	CaughtUp time.Duration
	// MaxEarly is the earliest fire, before its slot.
	MaxEarly time.Duration
	// StallDuring and StallAfter are the longest times without any fire
	// stored (of any schedule) during the fault, and from the heal until
	// caught up (or the window's end, if later).
	StallDuring, StallAfter time.Duration

	lost, dups, early []string
}

// account counts the window's slots from the fires read.
func account(scheds []schedule, fires map[slotKey][]fireRec, w window) figures {
	f := figures{}
	var during, after []time.Duration
	for _, s := range scheds {
		slots := s.slots(w.start, w.end)
		if len(slots) > 0 {
			f.Schedules++
		}
		for _, ms := range slots {
			f.Expected++
			recs := fires[slotKey{s.id, ms}]
			name := kvstore.SlotID(s.id, time.UnixMilli(ms))
			if len(recs) == 0 {
				f.Lost++
				f.lost = append(f.lost, name)
				continue
			}
			f.Fired++
			if len(recs) > 1 {
				f.Duplicates += len(recs) - 1
				var who []string
				for _, r := range recs {
					who = append(who, r.instance+"/"+cmpReason(r.reason))
				}
				f.dups = append(f.dups, fmt.Sprintf("%s x%d (%s)", name, len(recs), strings.Join(who, ", ")))
			}
			first := slices.MinFunc(recs, func(a, b fireRec) int { return a.stored.Compare(b.stored) })
			slot := time.UnixMilli(ms)
			late := first.stored.Sub(slot)
			if late < 0 {
				f.Early++
				f.MaxEarly = max(f.MaxEarly, -late)
				f.early = append(f.early, fmt.Sprintf("%s by %s (%s)", name, -late, first.instance))
			}
			f.MaxLate = max(f.MaxLate, late)
			if slot.Before(w.heal) {
				during = append(during, late)
				f.CaughtUp = max(f.CaughtUp, first.stored.Sub(w.heal))
			} else {
				after = append(after, late)
			}
		}
	}
	f.P99During, f.P99After = p99(during), p99(after)
	var stored []time.Time
	for _, recs := range fires {
		for _, r := range recs {
			stored = append(stored, r.stored)
		}
	}
	f.StallDuring = longestGap(stored, w.start, w.heal)
	f.StallAfter = longestGap(stored, w.heal, later(w.end, w.heal.Add(f.CaughtUp)))
	sort.Strings(f.lost)
	sort.Strings(f.dups)
	sort.Strings(f.early)
	return f
}

// longestGap is the longest interval in [from, to] that holds none of
// times.
func longestGap(times []time.Time, from, to time.Time) time.Duration {
	var in []time.Time
	for _, t := range times {
		if t.After(from) && t.Before(to) {
			in = append(in, t)
		}
	}
	slices.SortFunc(in, time.Time.Compare)
	gap, prev := time.Duration(0), from
	for _, t := range append(in, to) {
		gap = max(gap, t.Sub(prev))
		prev = t
	}
	return gap
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func cmpReason(r string) string {
	if r == "" {
		return "fire"
	}
	return r
}

// p99 is the 99th percentile (nearest rank); 0 for none.
func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	rank := (len(d)*99 + 99) / 100 // ceil(0.99 n)
	return d[rank-1]
}

// line is the FAULT summary line, in the fault tests' format with the
// partition figures after it.
func (f figures) line(name string) string {
	return fmt.Sprintf("FAULT partition-%s: schedules=%d slots expected=%d fired=%d duplicates=%d lost=%d early=%d lateness_p99_during=%s lateness_p99_after=%s caught_up=%s stall_during=%s stall_after=%s",
		name, f.Schedules, f.Expected, f.Fired, f.Duplicates, f.Lost, f.Early,
		strconvDur(f.P99During), strconvDur(f.P99After), strconvDur(f.CaughtUp),
		strconvDur(f.StallDuring), strconvDur(f.StallAfter))
}
