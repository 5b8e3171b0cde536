package soak

// The end of a soak: settling until every schedule has fired past the end
// of the chaos, the exactly-once accounting, and the flatness verdicts.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// settle reads the fire stream until every schedule has fired its settle
// target and every trigger and backfill slot is in, or 5 minutes pass.
func settle(t *testing.T, c *checker, scheds []*soakSchedule, ch *chaos, tEnd time.Time) {
	t.Helper()
	want := ch.extraSlots()
	var behind, missing []string
	err := testwait.Until(5*time.Minute, "every schedule fired past the end of the chaos", func() error {
		if err := c.sync(context.Background()); err != nil {
			return err
		}
		behind, missing = behind[:0], missing[:0]
		for _, s := range scheds {
			if target, ok := settleTarget(s.timeline, tEnd); ok && c.latest[s.id] < target {
				behind = append(behind, s.id)
			}
		}
		for id := range want {
			if c.extra[id] == 0 {
				missing = append(missing, id)
			}
		}
		if len(behind)+len(missing) > 0 {
			return fmt.Errorf("%d schedules behind, %d trigger or backfill slots missing", len(behind), len(missing))
		}
		return nil
	})
	if err != nil {
		sort.Strings(missing)
		t.Errorf("soak: not settled: %v; behind e.g. %v, missing e.g. %v", err, first(behind, 5), first(missing, 5))
	}
}

// extraSlots is every trigger and backfill slot id the chaos asked for.
func (ch *chaos) extraSlots() map[string]bool {
	want := map[string]bool{}
	for id := range ch.triggers {
		want[id] = true
	}
	for _, b := range ch.backfills {
		for _, id := range b.backfillSlots() {
			want[id] = true
		}
	}
	return want
}

// verdict is the accounting of the whole run.
type verdict struct {
	byClass            map[string]*tally // "sec untouched", "ten touched", ...
	all                tally
	examples           []string
	flagged            []string // the slot ids of the examples (duplicate, unexpected: explainFlagged)
	extraWant, extraIn int
	extraDup, extraOff []string // extra slots fired twice, or never asked for
	extraLost          []string
	msgs               int
	bad                []string
	reasons            map[string]int
	late               []float64
}

// judge counts every schedule's regular slots against its timeline, and
// every extra slot against the requests.
func judge(c *checker, scheds []*soakSchedule, ch *chaos, tEnd time.Time) verdict {
	v := verdict{byClass: map[string]*tally{}, msgs: c.msgs, bad: c.bad, reasons: c.reasons, late: c.late}
	for _, s := range scheds {
		slots := c.regular[s.id]
		slices.Sort(slots)
		r := account(s.timeline, slots, tEnd)
		key := s.class + " untouched"
		if s.touched() {
			key = s.class + " touched"
		}
		if v.byClass[key] == nil {
			v.byClass[key] = &tally{}
		}
		v.byClass[key].add(r)
		v.all.add(r)
		for _, ex := range []struct {
			what  string
			slots []int64
		}{{"lost", r.lostSlots}, {"duplicate", r.dupSlots}, {"unexpected", r.unexpectedSlots}} {
			for _, ms := range first(ex.slots, 3) {
				if len(v.examples) < 30 {
					slotID := kvstore.SlotID(s.id, time.UnixMilli(ms))
					v.examples = append(v.examples, fmt.Sprintf("%s %s (%s; timeline %s)", ex.what,
						slotID, time.UnixMilli(ms).UTC().Format("15:04:05.000"), s.describe()))
					if ex.what != "lost" {
						v.flagged = append(v.flagged, slotID)
					}
				}
			}
		}
	}
	want := ch.extraSlots()
	v.extraWant = len(want)
	for id, n := range c.extra {
		switch {
		case !want[id]:
			v.extraOff = append(v.extraOff, id)
		case n > 1:
			v.extraDup = append(v.extraDup, fmt.Sprintf("%s x%d", id, n))
		}
		if want[id] {
			v.extraIn++
		}
	}
	for id := range want {
		if c.extra[id] == 0 {
			v.extraLost = append(v.extraLost, id)
		}
	}
	sort.Strings(v.extraOff)
	sort.Strings(v.extraDup)
	sort.Strings(v.extraLost)
	return v
}

// describe is a schedule's timeline, for failure messages.
func (s *soakSchedule) describe() string {
	var b strings.Builder
	for i, seg := range s.timeline {
		if i > 0 {
			b.WriteString(", ")
		}
		what := "none"
		if seg.cad.active() {
			what = fmt.Sprintf("every %s+%s", seg.cad.step, seg.cad.phase)
		}
		fmt.Fprintf(&b, "%s from %s..%s", what, seg.begin.UTC().Format("15:04:05.000"), seg.start.UTC().Format("15:04:05.000"))
	}
	return b.String()
}

// report prints the summary and asserts exactly once: no slot twice, none
// owed and missing, none fired that was not allowed, every trigger and
// backfill slot once.
func (v verdict) report(t *testing.T, dur time.Duration, restarts map[string]int, ch *chaos) {
	t.Helper()
	classes := make([]string, 0, len(v.byClass))
	for k := range v.byClass {
		classes = append(classes, k)
	}
	sort.Strings(classes)
	for _, k := range classes {
		r := v.byClass[k]
		t.Logf("soak %s: slots expected=%d fired=%d duplicates=%d lost=%d unexpected=%d", k, r.expected, r.fired, r.duplicates, r.lost, r.unexpected)
	}
	slices.Sort(v.late)
	t.Logf("soak: %d fire messages, by Sched-Reason %v; dispatch lateness p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, max %.1f ms",
		v.msgs, v.reasons, percentile(v.late, 50), percentile(v.late, 99), percentile(v.late, 99.9), percentile(v.late, 100))
	faulttest.Summarize(t, fmt.Sprintf("SOAK %s: schedules=%d slots expected=%d fired=%d duplicates=%d lost=%d unexpected=%d; "+
		"trigger/backfill slots expected=%d fired=%d duplicates=%d lost=%d; restarts SIGTERM=%d SIGKILL=%d; actions %v",
		dur, nSec+nTen+nMin, v.all.expected, v.all.fired, v.all.duplicates, v.all.lost, v.all.unexpected,
		v.extraWant, v.extraIn, len(v.extraDup), len(v.extraLost), restarts["SIGTERM"], restarts["SIGKILL"], ch.counts))
	if v.all.duplicates+v.all.lost+v.all.unexpected > 0 {
		t.Errorf("soak: regular slots: %d duplicates, %d lost, %d unexpected; e.g.\n  %s",
			v.all.duplicates, v.all.lost, v.all.unexpected, strings.Join(v.examples, "\n  "))
	}
	if len(v.extraDup)+len(v.extraLost)+len(v.extraOff) > 0 {
		t.Errorf("soak: trigger and backfill slots: %d twice %v, %d missing %v, %d never asked for %v",
			len(v.extraDup), first(v.extraDup, 5), len(v.extraLost), first(v.extraLost, 5), len(v.extraOff), first(v.extraOff, 5))
	}
	if len(v.bad) > 0 {
		t.Errorf("soak: %d malformed fire messages, e.g. %v", len(v.bad), first(v.bad, 5))
	}
}

// judgeFleet applies soakRule to every generation (sampled until
// samplesEnd) and checks every instance still runs.
func judgeFleet(t *testing.T, fl *fleet, samplesEnd time.Time) {
	t.Helper()
	judged := 0
	for _, in := range fl.insts {
		for _, g := range in.generations() {
			end := g.ended
			if end.IsZero() {
				end = samplesEnd
			}
			life := end.Sub(g.started)
			in.mu.Lock()
			samples := slices.Clone(g.samples)
			in.mu.Unlock()
			f := soakRule.judge(samples, life, g.n == 1)
			ended := "ran to the end"
			if g.end != "" {
				ended = "ended by " + g.end
			}
			if !f.judged {
				t.Logf("soak flatness %s, %s after %s: not judged: %s", g, ended, life.Round(time.Second), f.why)
				continue
			}
			judged++
			t.Logf("soak flatness %s, %s after %s: after warm-up %s; last third %s", g, ended, life.Round(time.Second), f.base, f.final)
			for _, fail := range f.failures {
				t.Errorf("soak: %s is not flat after warm-up: %s", g, fail)
			}
		}
		if !in.proc.Running() {
			t.Errorf("soak: scheduler %s is not running at the end: %s", in.name, in.proc.ExitStatus())
		}
	}
	if judged == 0 {
		t.Errorf("soak: no generation lived long enough to judge its flatness (rule: warm-up %s, restarted %s, window %s)",
			soakRule.warmFirst, soakRule.warmRestart, soakRule.window)
	}
}

func first[T any](s []T, n int) []T { return s[:min(n, len(s))] }
