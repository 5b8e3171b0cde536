package cronx

import (
	"math"
	"math/big"
	"time"
)

// minEvery is the shortest interval ParseEvery accepts.
const minEvery = 100 * time.Millisecond

// Interval fires at Anchor + k*Every for every integer k, i.e. every Every,
// in phase with Anchor. Anchor sets the phase, not a start: instants before
// Anchor fire too. The zero Anchor means the Unix epoch, so an Interval of
// 5s fires at :00, :05, ... UTC and one of 24h at 00:00 UTC.
//
// An Interval whose Every is not positive never fires. [ParseEvery]
// validates user input for Every.
type Interval struct {
	Every  time.Duration
	Anchor time.Time
}

// Next returns the first instant Anchor + k*Every strictly after after, in
// UTC. It uses exact integer arithmetic, so it neither drifts nor depends on
// how far after is from Anchor. It returns the zero time if Every is not
// positive or the fire time is beyond what time.Time can represent.
func (i Interval) Next(after time.Time) time.Time {
	if i.Every <= 0 {
		return time.Time{}
	}
	anchor := i.Anchor
	if anchor.IsZero() {
		anchor = time.Unix(0, 0)
	}
	as, an := anchor.Unix(), int64(anchor.Nanosecond())
	bs, bn := after.Unix(), int64(after.Nanosecond())
	if t, ok := nextIntervalFast(as, an, bs, bn, int64(i.Every)); ok {
		return t
	}
	return nextIntervalBig(as, an, bs, bn, int64(i.Every))
}

// nextIntervalFast computes Interval.Next in int64 arithmetic when anchor
// (as s + an ns since the epoch) and after (bs s + bn ns) are within about
// 136 years of each other and every is below about 73 years, bounds under
// which nothing can overflow. It reports false otherwise.
func nextIntervalFast(as, an, bs, bn, every int64) (time.Time, bool) {
	const maxSec, maxDelta, maxEvery = 1 << 40, 1 << 32, 1 << 61
	if as <= -maxSec || as >= maxSec || bs <= -maxSec || bs >= maxSec || every >= maxEvery {
		return time.Time{}, false
	}
	ds := bs - as
	if ds <= -maxDelta || ds >= maxDelta {
		return time.Time{}, false
	}
	diff := ds*1e9 + bn - an // |diff| < 2^32 s, about 4.3e18 ns
	k := diff / every
	if diff%every != 0 && diff < 0 {
		k-- // floor division
	}
	k++
	// diff < k*every <= diff+every, so |k*every| < 6.6e18 fits in int64.
	return time.Unix(as, an).Add(time.Duration(k * every)).UTC(), true
}

// nextIntervalBig is nextIntervalFast without range limits.
func nextIntervalBig(as, an, bs, bn, every int64) time.Time {
	billion := big.NewInt(1e9)
	nanos := func(s, n int64) *big.Int {
		v := new(big.Int).Mul(big.NewInt(s), billion)
		return v.Add(v, big.NewInt(n))
	}
	anchor := nanos(as, an)
	diff := new(big.Int).Sub(nanos(bs, bn), anchor)
	e := big.NewInt(every)
	k := new(big.Int).Div(diff, e) // Euclidean division: floor, as e > 0
	k.Add(k, big.NewInt(1))
	fire := k.Mul(k, e)
	fire.Add(fire, anchor)
	sec, nsec := new(big.Int).DivMod(fire, billion, new(big.Int))
	// time.Time counts seconds from year 1 in an int64.
	const unixToInternal = 62135596800
	if !sec.IsInt64() || sec.Int64() > math.MaxInt64-unixToInternal || sec.Int64() < math.MinInt64+unixToInternal {
		return time.Time{}
	}
	return time.Unix(sec.Int64(), nsec.Int64()).UTC()
}

// String describes the interval, e.g. "every 5s" or "every 1d12h", followed
// by " from <anchor>" (RFC 3339, UTC) when Anchor is set. The duration is
// written by FormatDuration, so that ParseEvery accepts it when it is
// valid input.
func (i Interval) String() string {
	s := "every " + FormatDuration(i.Every)
	if !i.Anchor.IsZero() {
		s += " from " + i.Anchor.UTC().Format(time.RFC3339Nano)
	}
	return s
}

// Count returns how many fire times fall in (after, through], exactly,
// however many there are (it does not walk them). ok is false when Every is
// not positive.
func (i Interval) Count(after, through time.Time) (n uint64, ok bool) {
	if i.Every <= 0 {
		return 0, false
	}
	if !through.After(after) {
		return 0, true
	}
	anchor := i.Anchor
	if anchor.IsZero() {
		anchor = time.Unix(0, 0)
	}
	// k(t) = floor((t - anchor) / Every) counts the fire times up to t;
	// the count in (after, through] is k(through) - k(after).
	billion, e := big.NewInt(1e9), big.NewInt(int64(i.Every))
	k := func(t time.Time) *big.Int {
		d := new(big.Int).Mul(big.NewInt(t.Unix()-anchor.Unix()), billion)
		d.Add(d, big.NewInt(int64(t.Nanosecond()-anchor.Nanosecond())))
		return d.Div(d, e) // Euclidean: floor, as e > 0
	}
	c := new(big.Int).Sub(k(through), k(after))
	if !c.IsUint64() {
		return math.MaxUint64, true
	}
	return c.Uint64(), true
}

// counter is a Schedule that counts its fire times in a range without
// walking them (Interval). Callers fall back to walking Next, with a bound,
// for other schedules.
type counter interface {
	Count(after, through time.Time) (n uint64, ok bool)
}
