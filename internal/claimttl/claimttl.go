// Package claimttl bounds how long a claim record (a schedule's
// kvstore.Claim in sched_state, a timer's in sched_wakeups) keeps other
// schedulers off its slot or timer. A claim says when it expires; the
// engines believe it only up to a limit, so that no record, forged or
// written with a clock far ahead, can hold a slot for ever
// (docs/protocol.md). Both engines and `scheduler run`'s --claim-ttl check
// use it.
package claimttl

import (
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Max bounds how long any claim is exclusive: a scheduler's claim TTL is
// at most this. A claim record that says otherwise expires no later than
// Max after it was made, and one made more than Max in the future has
// expired already.
const Max = 10 * time.Minute

// Expiry is when others may take claim c over, as seen at now: its
// Expires, but at most limit after the claim was made (limit <= 0 or over
// Max: Max). A scheduler passes the longest claim its stream's duplicate
// window can absorb, which no correct instance exceeds.
func Expiry(c kvstore.Claim, now time.Time, limit time.Duration) time.Time {
	if limit <= 0 || limit > Max {
		limit = Max
	}
	if c.At.After(now.Add(limit)) {
		return now // made in the future: forged, or a clock far ahead
	}
	if lim := c.At.Add(limit); c.Expires.After(lim) {
		return lim
	}
	return c.Expires
}
