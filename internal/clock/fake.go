package clock

import (
	"sort"
	"sync"
	"time"
)

// Fake is a test's time: it stands still until Advance or Set moves it,
// and then fires the timers that came due, in order of their deadlines.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	armed  chan struct{} // signalled whenever a timer is armed
}

type fakeTimer struct {
	fake *Fake
	at   time.Time
	c    chan time.Time
	on   bool
}

// NewFake returns a Clock reading the Fake's time, and the Fake, which
// starts at start.
func NewFake(start time.Time) (Clock, *Fake) {
	f := &Fake{now: start, armed: make(chan struct{}, 1)}
	return Clock{fake: f}, f
}

// Clock is a Clock reading f (what NewFake returned).
func (f *Fake) Clock() Clock { return Clock{fake: f} }

// Now is the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the time forward by d and fires what came due.
func (f *Fake) Advance(d time.Duration) { f.Set(f.Now().Add(d)) }

// Set moves the time to t (never backwards) and fires the timers whose
// deadline is at or before it, earliest first.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	if t.After(f.now) {
		f.now = t
	}
	var due []*fakeTimer
	keep := f.timers[:0]
	for _, ft := range f.timers {
		if ft.on && !ft.at.After(f.now) {
			ft.on = false
			due = append(due, ft)
			continue
		}
		if ft.on {
			keep = append(keep, ft)
		}
	}
	f.timers = keep
	now := f.now
	// Sorted under the lock: a timer reset meanwhile writes its deadline.
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	f.mu.Unlock()
	for _, ft := range due {
		select {
		case ft.c <- now:
		default: // the previous tick is unread, as with time.Timer
		}
	}
}

// Armed is signalled (buffer of one) whenever a timer is armed or reset:
// a test advancing the time can wait for the code under test to have set
// its next timer.
func (f *Fake) Armed() <-chan struct{} { return f.armed }

// Pending is how many timers are armed.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// ArmedFor reports whether a timer is armed for exactly at: a test can
// wait for the code under test to have planned that instant.
func (f *Fake) ArmedFor(at time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ft := range f.timers {
		if ft.on && ft.at.Equal(at) {
			return true
		}
	}
	return false
}

// Next is the earliest armed deadline, and whether there is one.
func (f *Fake) Next() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next time.Time
	for _, ft := range f.timers {
		if next.IsZero() || ft.at.Before(next) {
			next = ft.at
		}
	}
	return next, !next.IsZero()
}

func (f *Fake) newTimer(d time.Duration) *Timer {
	ft := &fakeTimer{fake: f, c: make(chan time.Time, 1)}
	f.reset(ft, d)
	return &Timer{C: ft.c, f: ft}
}

func (f *Fake) stop(ft *fakeTimer) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	was := ft.on
	ft.on = false
	for i, x := range f.timers {
		if x == ft {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			break
		}
	}
	return was
}

func (f *Fake) reset(ft *fakeTimer, d time.Duration) bool {
	was := f.stop(ft)
	f.mu.Lock()
	ft.at, ft.on = f.now.Add(d), true
	fire := d <= 0
	if !fire {
		f.timers = append(f.timers, ft)
	} else {
		ft.on = false
	}
	now := f.now
	f.mu.Unlock()
	if fire {
		select {
		case ft.c <- now:
		default:
		}
	}
	select {
	case f.armed <- struct{}{}:
	default:
	}
	return was
}
