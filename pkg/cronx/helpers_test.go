package cronx_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// mustZone loads an IANA zone or fails the test.
func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := cronx.LoadZone(name)
	if err != nil {
		t.Fatalf("LoadZone(%q): %v", name, err)
	}
	return loc
}

// ts parses an RFC 3339 instant or fails the test.
func ts(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return v
}
