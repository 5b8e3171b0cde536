package fires

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/account/accounttest"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestDecisionsMatchModel plays the engine's decisions (Decide, and what
// a worker does with each) on a virtual clock for thousands of generated
// specs, each with a random history of scheduler downtimes and operator
// pauses, and compares the fate of every slot with what the reference
// model expects from the documented rules (docs/protocol.md, "Every slot
// accounted for"): fired once, missed by the misfire policy, or skipped
// as paused; never nothing, never twice. CI runs a fixed seed;
// JETSCHED_ACCOUNT_SEED=random JETSCHED_ACCOUNT_CASES=100000 runs longer.
func TestDecisionsMatchModel(t *testing.T) {
	seed, count := modelSeed(t, 1500)
	r := rand.New(rand.NewPCG(seed, 52))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range count {
		written := base.Add(time.Duration(r.IntN(2*365*24*3600)) * time.Second).Add(time.Duration(r.IntN(1000)) * time.Millisecond)
		spec := accounttest.WithPolicy(r, accounttest.Spec(r, written))
		c, err := compile.Compile(spec, fmt.Sprintf("s%d", i), nil, nil)
		if err != nil {
			continue
		}
		h := genHistory(r, written, 3*24*time.Hour)
		if msg := playAndCompare(c, spec, written, h); msg != "" {
			t.Fatalf("case %d (seed %d): %s\nspec %+v\nhistory %s", i, seed, msg, spec, h)
		}
	}
}

// modelSeed reads JETSCHED_ACCOUNT_SEED and JETSCHED_ACCOUNT_CASES (see
// internal/account's property tests).
func modelSeed(t *testing.T, def int) (uint64, int) {
	t.Helper()
	seed, count := uint64(51), def
	if v := os.Getenv("JETSCHED_ACCOUNT_SEED"); v == "random" {
		seed = rand.Uint64()
	} else if v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("JETSCHED_ACCOUNT_SEED=%q: want a number or random", v)
		}
		seed = n
	}
	if v := os.Getenv("JETSCHED_ACCOUNT_CASES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("JETSCHED_ACCOUNT_CASES=%q: want a positive number", v)
		}
		count = n
	}
	t.Logf("seed %d, %d cases (JETSCHED_ACCOUNT_SEED=%d replays them)", seed, count, seed)
	return seed, count
}

// history is what happened around a schedule: when no scheduler ran, and
// when an operator paused it.
type history struct {
	end    time.Time
	downs  []interval // no scheduler runs in [from, to)
	pauses []interval // paused at from, resumed at to (or until to, when until)
	until  []bool
}

type interval struct{ from, to time.Time }

func (h history) String() string {
	s := ""
	for _, d := range h.downs {
		s += fmt.Sprintf("down %s..%s; ", d.from.Format(time.RFC3339), d.to.Format(time.RFC3339))
	}
	for i, p := range h.pauses {
		s += fmt.Sprintf("paused %s..%s (until %v); ", p.from.Format(time.RFC3339), p.to.Format(time.RFC3339), h.until[i])
	}
	return s + "end " + h.end.Format(time.RFC3339)
}

// genHistory is a random history over length from start: a few
// downtimes (one may begin at start: every scheduler down when the spec
// is written) and pauses, ending with schedulers up.
func genHistory(r *rand.Rand, start time.Time, length time.Duration) history {
	h := history{end: start.Add(length)}
	randIn := func(lo, hi time.Time) time.Time {
		if !hi.After(lo) {
			return lo
		}
		return lo.Add(time.Duration(r.Int64N(int64(hi.Sub(lo)))))
	}
	lengths := []time.Duration{20 * time.Second, 90 * time.Second, 7 * time.Minute, time.Hour, 5 * time.Hour, 30 * time.Hour}
	for range r.IntN(4) {
		from := randIn(start, h.end.Add(-time.Hour))
		if r.IntN(4) == 0 && len(h.downs) == 0 {
			from = start
		}
		to := from.Add(lengths[r.IntN(len(lengths))]).Add(time.Duration(r.IntN(1000)) * time.Millisecond)
		h.downs = append(h.downs, interval{from, earliest(to, h.end.Add(-time.Minute))})
	}
	at := start
	for range r.IntN(3) {
		from := randIn(at, h.end.Add(-2*time.Hour))
		to := from.Add(lengths[r.IntN(len(lengths))])
		if !to.Before(h.end) {
			break
		}
		h.pauses = append(h.pauses, interval{from, to})
		h.until = append(h.until, r.IntN(2) == 0)
		at = to.Add(time.Second)
	}
	return h
}

// up reports whether a scheduler runs at t.
func (h history) up(t time.Time) bool {
	for _, d := range h.downs {
		if !t.Before(d.from) && t.Before(d.to) {
			return false
		}
	}
	return true
}

// paused reports whether the schedule is paused at t.
func (h history) paused(t time.Time) bool {
	for _, p := range h.pauses {
		if !t.Before(p.from) && t.Before(p.to) {
			return true
		}
	}
	return false
}

// resumedBy is when the last pause that ended by t ended (zero: none).
func (h history) resumedBy(t time.Time) time.Time {
	var last time.Time
	for _, p := range h.pauses {
		if !p.to.After(t) && p.to.After(last) {
			last = p.to
		}
	}
	return last
}

// events are the instants at which something changes.
func (h history) events() []time.Time {
	var out []time.Time
	for _, d := range h.downs {
		out = append(out, d.from, d.to)
	}
	for _, p := range h.pauses {
		out = append(out, p.from, p.to)
	}
	out = append(out, h.end)
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// decidedAt is when the engine comes to slot s: the first instant at or
// after it when a scheduler runs and the schedule is not paused.
func (h history) decidedAt(s time.Time) time.Time {
	t := s
	for range 100 {
		if h.up(t) && !h.paused(t) {
			return t
		}
		next := h.end
		for _, e := range h.events() {
			if e.After(t) {
				next = e
				break
			}
		}
		t = next
	}
	return t
}

// Fates of a slot.
const (
	fateFired  = "fired"
	fateMissed = "missed"
	fatePaused = "paused"
)

// playAndCompare plays c's decisions over h and compares every slot's
// fate with the model's; "" when they agree.
func playAndCompare(c compile.Compiled, spec kvstore.Spec, written time.Time, h history) string {
	got, err := play(c, spec, written, h)
	if err != "" {
		return err
	}
	want := expected(c, spec, written, h)
	for s, w := range want {
		if g := got[s]; g != w {
			return fmt.Sprintf("slot %s: the engine %s, the model expects %s", time.Unix(0, s).UTC().Format(time.RFC3339Nano), orNothing(g), w)
		}
	}
	for s, g := range got {
		if _, ok := want[s]; !ok {
			return fmt.Sprintf("slot %s: the engine %s, the model owes no such slot", time.Unix(0, s).UTC().Format(time.RFC3339Nano), g)
		}
	}
	return ""
}

func orNothing(s string) string {
	if s == "" {
		return "did nothing"
	}
	return s
}

// expected is the model's fate of every slot the engine has come to by
// the history's end, by slot (Unix ns).
func expected(c compile.Compiled, spec kvstore.Spec, written time.Time, h history) map[int64]string {
	pol := c.Policy
	threshold := pol.MisfireThreshold
	if threshold <= 0 {
		threshold = DefaultMisfireThreshold
	}
	type slot struct{ at, decided time.Time }
	var slots []slot
	account.RecurrenceOf(c.Schedule).Walk(account.OwedFrom(spec.At, written), 5000, func(o account.Occurrence) bool {
		if o.Fate != account.Fires {
			return true
		}
		if o.At.After(h.end) {
			return false
		}
		if u := h.decidedAt(o.At); !u.After(h.end) {
			slots = append(slots, slot{o.At, u})
		}
		return true
	})
	out := map[int64]string{}
	for i, s := range slots {
		late := s.decided.Sub(s.at)
		switch {
		case s.at.Before(h.resumedBy(s.decided)):
			out[s.at.UnixNano()] = fatePaused
		case late <= threshold:
			out[s.at.UnixNano()] = fateFired
		case pol.Misfire == kvstore.MisfireFireAll:
			if s.at.Before(s.decided.Add(-pol.CatchupWindow)) {
				out[s.at.UnixNano()] = fateMissed
			} else {
				out[s.at.UnixNano()] = fateFired
			}
		case pol.Misfire == kvstore.MisfireFireOnce:
			// The latest slot late past the threshold among those decided
			// at the same instant fires, unless older than the catch-up
			// window; the ones before it are missed.
			j := i
			for j+1 < len(slots) && slots[j+1].decided.Equal(s.decided) && slots[j+1].decided.Sub(slots[j+1].at) > threshold &&
				!slots[j+1].at.Before(h.resumedBy(s.decided)) {
				j++
			}
			if j == i && !s.at.Before(s.decided.Add(-pol.CatchupWindow)) {
				out[s.at.UnixNano()] = fateFired
			} else {
				out[s.at.UnixNano()] = fateMissed
			}
		default:
			out[s.at.UnixNano()] = fateMissed
		}
	}
	return out
}

// play runs the engine's decisions for c over h on a virtual clock and
// returns each slot's fate, or why the play went wrong.
func play(c compile.Compiled, spec kvstore.Spec, written time.Time, h history) (map[int64]string, string) {
	got := map[int64]string{}
	record := func(s time.Time, fate string) string {
		if prev, ok := got[s.UnixNano()]; ok {
			return fmt.Sprintf("slot %s %s twice (%s, then %s)", s.UTC().Format(time.RFC3339Nano), "decided", prev, fate)
		}
		got[s.UnixNano()] = fate
		return ""
	}
	var st *kvstore.State
	var settled string
	var at time.Time
	if spec.At != nil {
		at = *spec.At
	}
	events := h.events()
	pauseIdx := 0
	now := written
	for steps := 0; ; steps++ {
		if steps > 200_000 {
			return nil, "the play did not end"
		}
		// Operator actions due now.
		for pauseIdx < 2*len(h.pauses) {
			i := pauseIdx / 2
			p := h.pauses[i]
			if pauseIdx%2 == 0 {
				if p.from.After(now) {
					break
				}
				if st == nil {
					st = &kvstore.State{}
				}
				pause := &kvstore.Pause{At: p.from}
				if h.until[i] {
					pause.Until = p.to
				}
				st.Paused = pause
			} else {
				if p.to.After(now) {
					break
				}
				if !h.until[i] && st.Paused != nil {
					st.Paused, st.ResumedAt = nil, p.to
				}
			}
			pauseIdx++
		}
		wake := h.end
		if h.up(now) {
			for range 10_000 {
				in := Input{Now: now, Plan: c.Plan, Schedule: c.Schedule, Policy: c.Policy, State: st, Settled: settled,
					MisfireThreshold: DefaultMisfireThreshold, Written: written, Created: written, At: at}
				d := Decide(in)
				if d.Action == ActWait {
					if !d.Until.IsZero() && d.Until.Before(wake) {
						wake = d.Until
					}
					break
				}
				if msg := act(c, &st, &settled, d, now, record); msg != "" {
					return nil, msg
				}
			}
		}
		if !now.Before(h.end) {
			return got, ""
		}
		for _, e := range events {
			if e.After(now) && e.Before(wake) {
				wake = e
				break
			}
		}
		if !wake.After(now) {
			return nil, fmt.Sprintf("the engine asked to wake at %s, not after now %s", wake, now)
		}
		now = wake
	}
}

// act does what a worker does with decision d, in memory: the state
// written, and the fate of each slot the decision settles.
func act(c compile.Compiled, stp **kvstore.State, settled *string, d Decision, now time.Time, record func(time.Time, string) string) string {
	st := *stp
	missed := func() string {
		fate := fateMissed
		if notFiredStatus(d.MissedReason) == kvstore.TickSkipped {
			fate = fatePaused
			if d.MissedReason != reasonPaused {
				return "slots skipped for " + d.MissedReason
			}
		}
		n, nom := d.FirstMissed, d.FirstMissedNominal
		for i := 0; i < d.Missed && !n.IsZero() && !n.After(d.LastMissed); i++ {
			if msg := record(n, fate); msg != "" {
				return msg
			}
			step := cronx.ExplainAfter(c.Schedule, n, nom)
			n, nom = step.At, step.Nominal
		}
		return ""
	}
	switch d.Action {
	case ActInit:
		*stp = plannedState(c.Plan, d, now)
	case ActReplan:
		if d.Implausible != "" {
			return "re-planned as implausible: " + d.Implausible
		}
		st.Plan = c.Plan
		setNext(st, d)
	case ActMisfire:
		if msg := missed(); msg != "" {
			return msg
		}
		setNext(st, d)
		st.SkipNext = d.SkipNext
		if p := st.Paused; p != nil && !p.Until.IsZero() && !now.Before(p.Until) {
			st.Paused, st.ResumedAt = nil, p.Until
		}
	case ActClaim:
		if msg := missed(); msg != "" {
			return msg
		}
		if msg := record(d.Slot, fateFired); msg != "" {
			return msg
		}
		*settled = fmt.Sprintf("t%d", d.Slot.UnixNano())
		st.Claim = &kvstore.Claim{Slot: d.Slot, Token: *settled, Owner: "sim", At: now, Expires: now.Add(30 * time.Second)}
		setNext(st, d)
		st.Fires++
	default:
		return "unexpected action " + d.Action.String()
	}
	return ""
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
