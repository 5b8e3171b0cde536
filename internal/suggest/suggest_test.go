package suggest_test

import (
	"testing"
	"time"
	_ "time/tzdata" // the zones the binary knows

	"github.com/jetsched/jetsched/internal/suggest"
)

func TestZone(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Europe/Pariss": "Europe/Paris", "europe/paris": "Europe/Paris", "America/New_Yrok": "America/New_York",
		"Asia/Tokio": "Asia/Tokyo", "Mars/Olympus": "", "UTC": "UTC",
	} {
		if got := suggest.Zone(in); got != want {
			t.Errorf("Zone(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestZoneNamesLoad: every name the suggestions offer is one Go loads.
func TestZoneNamesLoad(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Europe/Paris", "America/New_York", "Australia/Lord_Howe"} {
		if suggest.Zone(name) != name {
			t.Errorf("Zone(%q) is not itself", name)
		}
	}
	for _, name := range suggest.ZoneNames() {
		if _, err := time.LoadLocation(name); err != nil {
			t.Errorf("zone %q: %v", name, err)
		}
	}
	if n := len(suggest.ZoneNames()); n < 400 {
		t.Errorf("%d zone names, want the whole tz database", n)
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	names := []string{"ls", "add", "rm"}
	if got := suggest.Nearest("lst", names, 2); got != "ls" {
		t.Errorf("Nearest(lst) = %q", got)
	}
	if got := suggest.Nearest("zzzzzz", names, 2); got != "" {
		t.Errorf("Nearest(zzzzzz) = %q, want none", got)
	}
	if d := suggest.Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance = %d, want 3", d)
	}
}
