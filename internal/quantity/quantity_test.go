package quantity_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/quantity"
)

// TestCut: the lexer other unit sets (the timer forms' whours) share.
func TestCut(t *testing.T) {
	for _, c := range []struct {
		in, num, unit, rest string
		ok                  bool
	}{
		{"48 whours", "48", "whours", "", true},
		{"1.5whours", "1.5", "whours", "", true},
		{"1 d 3 h", "1", "d", "3 h", true},
		{"1h30m", "1", "h", "30m", true},
		{"30", "30", "", "", false},
		{"x", "", "", "x", false},
		{". h", "", "", ". h", false},
	} {
		num, unit, rest, ok := quantity.Cut(c.in)
		if num != c.num || unit != c.unit || rest != c.rest || ok != c.ok {
			t.Errorf("Cut(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", c.in, num, unit, rest, ok, c.num, c.unit, c.rest, c.ok)
		}
	}
}

// TestUnit: the units and words the grammar knows, any case.
func TestUnit(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"ns": time.Nanosecond, "µs": time.Microsecond, "μs": time.Microsecond, "MS": time.Millisecond,
		"secs": time.Second, "Minutes": time.Minute, "hr": time.Hour, "days": 24 * time.Hour,
	} {
		if got, ok := quantity.Unit(in); !ok || got != want {
			t.Errorf("Unit(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "w", "weeks", "whours", "y"} {
		if got, ok := quantity.Unit(bad); ok {
			t.Errorf("Unit(%q) = %v, want unknown", bad, got)
		}
	}
}
