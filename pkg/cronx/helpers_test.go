package cronx_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testtime"
)

// mustZone loads an IANA zone or fails the test.
func mustZone(t testing.TB, name string) *time.Location { return testtime.Zone(t, name) }

// ts parses an RFC 3339 instant (with its offset) or fails the test.
func ts(t testing.TB, s string) time.Time { return testtime.Instant(t, s) }
