package calendar_test

import (
	"testing"
	"time"
)

// TestEasterRules checks "easter" rules through the public API against
// well-known dates.
func TestEasterRules(t *testing.T) {
	c := mustParse(t, `{"zone": "Europe/Rome", "holidays": [
		{"name": "Good Friday", "easter": -2},
		{"name": "Easter Sunday", "easter": 0},
		{"name": "Easter Monday", "easter": 1},
		{"name": "Pentecost", "easter": 49}
	]}`)
	rome := c.Location()
	for _, s := range []string{
		"2000-04-23", "2008-03-23", "2011-04-24", "2019-04-21", "2024-03-31",
		"2025-04-20", "2038-04-25", "2100-03-28", "2285-03-22", "1818-03-22",
		"1943-04-25", "2045-04-09", "2049-04-18", "2076-04-19", "2095-04-24",
	} {
		sunday := local(t, rome, s+" 12:00")
		for _, tt := range []struct {
			days int
			name string
		}{{-2, "Good Friday"}, {0, "Easter Sunday"}, {1, "Easter Monday"}, {49, "Pentecost"}} {
			at := sunday.AddDate(0, 0, tt.days)
			if h, ok := c.Holiday(at); !ok || h.Name != tt.name {
				t.Errorf("%s: %s is %+v (%v), want %s", s, at.Format(time.DateOnly), h, ok, tt.name)
			}
		}
		for _, days := range []int{-3, -1, 2, 48} {
			if h, ok := c.Holiday(sunday.AddDate(0, 0, days)); ok {
				t.Errorf("%s%+d days: unexpected %+v", s, days, h)
			}
		}
	}
}
