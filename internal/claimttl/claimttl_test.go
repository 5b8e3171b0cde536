package claimttl_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/claimttl"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestExpiry: a claim's own Expires holds while it is within the limit
// after the claim was made; beyond, the limit cuts it; a claim made
// further in the future than the limit has expired already; a limit that
// is zero, negative or over Max is Max.
func TestExpiry(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	claim := func(at, expires time.Time) kvstore.Claim { return kvstore.Claim{At: at, Expires: expires} }
	for _, c := range []struct {
		name  string
		c     kvstore.Claim
		limit time.Duration
		want  time.Time
	}{
		{"own expiry within the limit", claim(now, now.Add(30*time.Second)), time.Minute, now.Add(30 * time.Second)},
		{"expiry past the limit", claim(now, now.Add(time.Hour)), time.Minute, now.Add(time.Minute)},
		{"made in the future, within the limit", claim(now.Add(30*time.Second), now.Add(40*time.Second)), time.Minute, now.Add(40 * time.Second)},
		{"made further ahead than the limit", claim(now.Add(2*time.Minute), now.Add(3*time.Minute)), time.Minute, now},
		{"made in 2099", claim(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2099, 1, 1, 0, 1, 0, 0, time.UTC)), 0, now},
		{"zero limit is Max", claim(now, now.Add(time.Hour)), 0, now.Add(claimttl.Max)},
		{"negative limit is Max", claim(now, now.Add(time.Hour)), -time.Second, now.Add(claimttl.Max)},
		{"limit over Max is Max", claim(now, now.Add(time.Hour)), time.Hour, now.Add(claimttl.Max)},
		{"expired long ago", claim(now.Add(-time.Hour), now.Add(-59*time.Minute)), time.Minute, now.Add(-59 * time.Minute)},
	} {
		if got := claimttl.Expiry(c.c, now, c.limit); !got.Equal(c.want) {
			t.Errorf("%s: Expiry = %s, want %s", c.name, got, c.want)
		}
	}
}
