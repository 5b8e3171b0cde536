package soak

import (
	"slices"
	"testing"
	"time"
)

func TestCadence(t *testing.T) {
	c := cadence{step: time.Minute, phase: 17 * time.Second}
	for _, tc := range []struct {
		ms    int64
		on    bool
		after int64
	}{
		{17_000, true, 77_000},
		{16_999, false, 17_000},
		{0, false, 17_000},
		{-43_000, true, 17_000},
		{-43_001, false, -43_000},
		{120_000, false, 137_000},
	} {
		if got := c.on(tc.ms); got != tc.on {
			t.Errorf("on(%d) = %v, want %v", tc.ms, got, tc.on)
		}
		if got := c.after(tc.ms); got != tc.after {
			t.Errorf("after(%d) = %d, want %d", tc.ms, got, tc.after)
		}
	}
}

func TestAccount(t *testing.T) {
	t0 := time.UnixMilli(1_800_000_000_000)
	sec := cadence{step: time.Second}
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// slots is every slot of c in (from, to] (seconds after t0), plus extra.
	slots := func(c cadence, from, to float64, extra ...int64) []int64 {
		var out []int64
		for ms := c.after(at(from).UnixMilli()); ms <= at(to).UnixMilli(); ms += c.step.Milliseconds() {
			out = append(out, ms)
		}
		out = append(out, extra...)
		slices.Sort(out)
		return out
	}
	ms := func(s float64) int64 { return at(s).UnixMilli() }
	created := []segment{{begin: at(0.2), start: at(0.5), cad: sec}}
	// A pause returning at 30.1 (grace 5s), resumed at 60 (returned 60.1).
	paused := append(slices.Clone(created),
		segment{begin: at(30), start: at(30.1), grace: 5 * time.Second, lead: 5 * time.Second},
		segment{begin: at(60), start: at(60.1), grace: 5 * time.Second, lead: 5 * time.Second, cad: sec})
	// The same pause with a lead of 20s: slots 10..25 need not fire.
	pausedLead := slices.Clone(paused)
	pausedLead[1].lead = 20 * time.Second
	// From 1s to 2s at 30 (returned 30.1).
	changed := append(slices.Clone(created),
		segment{begin: at(30), start: at(30.1), grace: 5 * time.Second, lead: 5 * time.Second, cad: cadence{step: 2 * time.Second}})

	for _, tc := range []struct {
		name  string
		tl    []segment
		fired []int64
		want  tally
	}{
		{"every slot", created, slots(sec, 0.5, 100), tally{expected: 100, fired: 100}},
		{"one lost", created, slices.DeleteFunc(slots(sec, 0.5, 100), func(v int64) bool { return v == ms(50) }),
			tally{expected: 100, fired: 99, lost: 1, lostSlots: []int64{ms(50)}}},
		{"one twice", created, slots(sec, 0.5, 100, ms(7)),
			tally{expected: 100, fired: 100, duplicates: 1, dupSlots: []int64{ms(7)}}},
		{"before the schedule existed", created, slots(sec, -3, 100),
			tally{expected: 100, fired: 100, unexpected: 3, unexpectedSlots: []int64{ms(-2), ms(-1), ms(0)}}},
		{"later slots are not owed", created, slots(sec, 0.5, 120), tally{expected: 100, fired: 100}},
		// Owed: 1..25 (until the pause began less its grace) and 66..100;
		// 26..35 may fire (the pause takes effect by 35.1).
		{"paused, fuzzy edges fired", paused, slots(sec, 0.5, 35.1, slots(sec, 60, 100)...), tally{expected: 60, fired: 60}},
		{"paused, fuzzy edges not fired", paused, slots(sec, 0.5, 25, slots(sec, 65.1, 100)...), tally{expected: 60, fired: 60}},
		{"paused, fired while paused", paused, slots(sec, 0.5, 25, append(slots(sec, 65.1, 100), ms(36), ms(59))...),
			tally{expected: 60, fired: 60, unexpected: 2, unexpectedSlots: []int64{ms(36), ms(59)}}},
		{"paused, owed slot after the resume lost", paused, slots(sec, 0.5, 25, slots(sec, 66.1, 100)...),
			tally{expected: 60, fired: 59, lost: 1, lostSlots: []int64{ms(66)}}},
		{"paused with a lead", pausedLead, slots(sec, 0.5, 10, slots(sec, 65.1, 100)...), tally{expected: 45, fired: 45}},
		// Owed: 1..25 on 1s, then 36, 38, ... 100 on 2s (33 slots).
		{"cadence change", changed, slots(sec, 0.5, 35, slots(cadence{step: 2 * time.Second}, 35, 100)...),
			tally{expected: 58, fired: 58}},
		{"old cadence fires on", changed, slots(sec, 0.5, 35, append(slots(cadence{step: 2 * time.Second}, 35, 100), ms(37))...),
			tally{expected: 58, fired: 58, unexpected: 1, unexpectedSlots: []int64{ms(37)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := account(tc.tl, tc.fired, at(100))
			if got.expected != tc.want.expected || got.fired != tc.want.fired || got.lost != tc.want.lost ||
				got.duplicates != tc.want.duplicates || got.unexpected != tc.want.unexpected ||
				!slices.Equal(got.lostSlots, tc.want.lostSlots) || !slices.Equal(got.dupSlots, tc.want.dupSlots) ||
				!slices.Equal(got.unexpectedSlots, tc.want.unexpectedSlots) {
				t.Errorf("account =\n %+v, want\n %+v", got, tc.want)
			}
		})
	}
}

func TestSettleTarget(t *testing.T) {
	t0 := time.UnixMilli(1_800_000_000_000)
	ten := cadence{step: 10 * time.Second}
	tl := []segment{{begin: t0, start: t0, cad: ten}}
	if got, ok := settleTarget(tl, t0.Add(25*time.Second)); !ok || got != t0.Add(30*time.Second).UnixMilli() {
		t.Errorf("untouched: %d %v, want the slot after the end", got, ok)
	}
	tl = append(tl, segment{begin: t0.Add(24 * time.Second), start: t0.Add(25 * time.Second), grace: 5 * time.Second, cad: ten})
	if got, ok := settleTarget(tl, t0.Add(25*time.Second)); !ok || got != t0.Add(40*time.Second).UnixMilli() {
		t.Errorf("resumed at the end: %d %v, want the slot after its grace", got, ok)
	}
	tl = append(tl, segment{begin: t0.Add(26 * time.Second), start: t0.Add(27 * time.Second)})
	if _, ok := settleTarget(tl, t0.Add(25*time.Second)); ok {
		t.Error("paused at the end: a target")
	}
}
