// Package labelcap bounds the distinct values a metric label takes: the
// first Max values seen keep their own series, and every later one is
// counted under Other, so that a scrape does not grow with the number of
// workflows (2,000 workflows made /metrics 2.8 MB).
package labelcap

import "sync"

// Other is the value a label takes beyond the cap.
const Other = "other"

// DefaultMax is the cap when none is given.
const DefaultMax = 100

// Cap admits the first Max distinct values of a label. It is safe for
// concurrent use. A value once admitted stays admitted (its series
// exists), so the label takes at most Max+1 values: the admitted ones and
// Other. A real value equal to Other shares Other's series.
type Cap struct {
	max  int
	mu   sync.Mutex
	seen map[string]struct{}
}

// New returns a Cap of max values: 0 is DefaultMax; a negative max admits
// no value (everything is Other).
func New(max int) *Cap {
	if max == 0 {
		max = DefaultMax
	}
	return &Cap{max: max, seen: map[string]struct{}{}}
}

// Value is v when v is admitted (seen before, or one of the first Max
// distinct values), else Other.
func (c *Cap) Value(v string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[v]; ok {
		return v
	}
	if len(c.seen) >= c.max {
		return Other
	}
	c.seen[v] = struct{}{}
	return v
}
