package calendars_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/calendars"
)

// about is a shipped file's "about" member.
type about struct {
	Title       string   `json:"title"`
	Sources     []string `json:"sources"`
	Checked     []int    `json:"checked"`
	Differences []struct {
		Dates   []string `json:"dates"`
		Against string   `json:"against"`
		Reason  string   `json:"reason"`
	} `json:"differences"`
}

// aboutOf reads the "about" member of the shipped calendar name.
func aboutOf(t *testing.T, name string) about {
	t.Helper()
	data, err := calendars.JSON(name)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		About about `json:"about"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc.About
}

// listedDifferences are the dates that the calendar's about.differences
// lists against the reference, with their reasons.
func listedDifferences(t *testing.T, name, against string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range aboutOf(t, name).Differences {
		if d.Against != against {
			continue
		}
		for _, day := range d.Dates {
			if out[day] != "" {
				t.Errorf("%s: %s listed twice against %s", name, day, against)
			}
			out[day] = d.Reason
		}
	}
	return out
}

// holidayDates are the dates, firstYear to lastYear, on which the shipped
// calendar name has a holiday (an actual or observed one).
func holidayDates(t *testing.T, name string) map[string]bool {
	t.Helper()
	cal, err := calendars.Parse(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for d := time.Date(firstYear, 1, 1, 12, 0, 0, 0, cal.Location()); d.Year() <= lastYear; d = d.AddDate(0, 0, 1) {
		if _, ok := cal.Holiday(d); ok {
			out[d.Format(time.DateOnly)] = true
		}
	}
	return out
}

// shipped are the calendars issue 55 asks for.
var shipped = []string{
	"au", "au-nsw", "au-vic", "ca",
	"de", "de-bb", "de-be", "de-bw", "de-by", "de-hb", "de-he", "de-hh", "de-mv",
	"de-ni", "de-nw", "de-rp", "de-sh", "de-sl", "de-sn", "de-st", "de-th",
	"fr", "in", "jp", "target2", "uk-england", "uk-scotland", "us-federal", "us-nyse",
}

// TestShipped: every shipped file parses, says its sources and its checked
// years (those of the conformance test), and its differences give reasons.
func TestShipped(t *testing.T) {
	names := calendars.Names()
	if len(names) == 0 {
		t.Fatal("no shipped calendars")
	}
	for _, name := range names {
		if _, err := calendars.Parse(name, nil); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		a := aboutOf(t, name)
		if a.Title == "" || len(a.Sources) == 0 {
			t.Errorf("%s: about needs a title and sources", name)
		}
		if len(a.Checked) != 2 || a.Checked[0] > firstYear || a.Checked[1] < lastYear {
			t.Errorf("%s: about.checked %v, want [%d, %d] or wider", name, a.Checked, firstYear, lastYear)
		}
	}
	var missing []string
	for _, s := range shipped {
		if _, err := calendars.JSON(calendars.Prefix + s); err != nil {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 || len(names) != len(shipped) {
		t.Errorf("shipped %d calendars %v; missing %v", len(names), names, missing)
	}
}

// TestNotFound: a builtin: name that does not ship is ErrNotFound, with
// the nearest name; names outside the namespace and paths are refused.
func TestNotFound(t *testing.T) {
	_, err := calendars.Parse("builtin:us-federl", nil)
	if !errors.Is(err, calendars.ErrNotFound) || !strings.Contains(err.Error(), "did you mean builtin:us-federal?") {
		t.Errorf("builtin:us-federl: %v", err)
	}
	for _, name := range []string{"us-federal", "builtin:", "builtin:../calendars", "builtin:us-federal.json", "builtin:conformance"} {
		if _, err := calendars.JSON(name); !errors.Is(err, calendars.ErrNotFound) {
			t.Errorf("JSON(%q): %v, want ErrNotFound", name, err)
		}
	}
	if !calendars.IsBuiltin("builtin:x") || calendars.IsBuiltin("x") {
		t.Error("IsBuiltin")
	}
}

// TestDocumented: docs/calendar.md's table of shipped calendars has a row
// for each, and none for a calendar that does not ship.
func TestDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/calendar.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if name, ok := strings.CutPrefix(line, "| `"+calendars.Prefix); ok {
			rows[calendars.Prefix+name[:strings.IndexByte(name, '`')]] = true
		}
	}
	for _, name := range calendars.Names() {
		if !rows[name] {
			t.Errorf("docs/calendar.md has no row for %s", name)
		}
		delete(rows, name)
	}
	for name := range rows {
		t.Errorf("docs/calendar.md lists %s, which does not ship", name)
	}
}
