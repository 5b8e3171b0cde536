package console

import (
	lru "container/list"
	"net"
	"sync"
	"time"
)

// Login throttling: after throttleFree failed sign-ins of a user or from
// an address, each further failure makes that user and that address wait
// throttleBase, doubling per failure up to throttleMax, before the console
// checks their credentials again (429 with Retry-After meanwhile). A key
// is forgotten throttleForget after its last failure; at most
// throttleCapacity keys are kept, the least recently failing dropped
// first.
const (
	throttleFree     = 5
	throttleBase     = time.Second
	throttleMax      = time.Minute
	throttleForget   = 15 * time.Minute
	throttleCapacity = 10_000
)

// throttle counts failed sign-ins per key (a user, an address) with
// exponential backoff, in bounded memory.
type throttle struct {
	now      func() time.Time
	capacity int

	mu      sync.Mutex
	entries map[string]*lru.Element // of *strike
	order   lru.List                // front: the most recent failure
}

// strike is a key's failures.
type strike struct {
	key      string
	failures int
	last     time.Time // the last failure
	until    time.Time // no check before then
}

func newThrottle(now func() time.Time, capacity int) *throttle {
	return &throttle{now: now, capacity: capacity, entries: map[string]*lru.Element{}}
}

// wait is how long the keys must still wait (0: check them now).
func (t *throttle) wait(keys ...string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var d time.Duration
	for _, k := range keys {
		if s := t.lookup(k, now); s != nil {
			d = max(d, s.until.Sub(now))
		}
	}
	return d
}

// fail records a failed sign-in of every key.
func (t *throttle) fail(keys ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, k := range keys {
		s := t.lookup(k, now)
		if s == nil {
			for len(t.entries) >= t.capacity {
				t.drop(t.order.Back())
			}
			s = &strike{key: k}
			t.entries[k] = t.order.PushFront(s)
		}
		t.order.MoveToFront(t.entries[k])
		s.failures++
		s.last = now
		if n := s.failures - throttleFree; n > 0 {
			backoff := throttleMax
			if n <= 16 {
				backoff = min(throttleBase<<(n-1), throttleMax)
			}
			s.until = now.Add(backoff)
		}
	}
}

// forgive forgets key's failures (a successful sign-in of that user).
func (t *throttle) forgive(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[key]; ok {
		t.drop(e)
	}
}

// lookup is key's strike, nil when it has none or has been forgotten.
func (t *throttle) lookup(key string, now time.Time) *strike {
	e, ok := t.entries[key]
	if !ok {
		return nil
	}
	s := e.Value.(*strike)
	if now.Sub(s.last) >= throttleForget {
		t.drop(e)
		return nil
	}
	return s
}

func (t *throttle) drop(e *lru.Element) {
	delete(t.entries, e.Value.(*strike).key)
	t.order.Remove(e)
}

// size is how many keys are kept.
func (t *throttle) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// userKey and addrKey are the throttle's keys of a user and of a remote
// address: an IPv6 address counts by its /64, which one host usually has
// whole.
func userKey(name string) string { return "user:" + name }

func addrKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return "addr:" + host
	case ip.To4() != nil:
		return "addr:" + ip.To4().String()
	}
	return "addr:" + ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
