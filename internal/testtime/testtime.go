// Package testtime reads the zones and instants that table tests are
// written in, failing the test on a typo instead of returning an error.
package testtime

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// Zone loads an IANA zone (as cronx.LoadZone) or fails the test.
func Zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := cronx.LoadZone(name)
	if err != nil {
		t.Fatalf("LoadZone(%q): %v", name, err)
	}
	return loc
}

// Instant parses an RFC 3339 instant, with its offset, or fails the test.
func Instant(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return v
}

// Ptr parses an RFC 3339 instant for a table literal (where no test is at
// hand) and points at it; a typo panics, which fails the test as well.
func Ptr(s string) *time.Time {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic("bad test time " + s + ": " + err.Error())
	}
	return &v
}
