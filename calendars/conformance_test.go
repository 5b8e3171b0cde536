package calendars_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/calendars"
	"github.com/jetsched/jetsched/internal/npmtest"
)

// reference says where date-holidays keeps a shipped calendar: its
// country and state codes and which of its types are our holidays.
type reference struct {
	Name    string   `json:"name"`
	Country string   `json:"country"`
	State   string   `json:"state,omitempty"`
	Types   []string `json:"types"`
	Rules   []string `json:"rules,omitempty"`
	From    int      `json:"from"`
	To      int      `json:"to"`
}

// dateHolidays maps every shipped calendar that date-holidays has to its
// codes (and, where we ship only some of its holidays, their rules); the others (us-nyse, target2: no such country there) are
// checked against the published lists in official_test.go. The UK's bank
// holidays are date-holidays' "public" days there.
var dateHolidays = map[string]reference{
	"us-federal":  {Country: "US", Types: []string{"public"}},
	"uk-england":  {Country: "GB", State: "ENG", Types: []string{"public", "bank"}},
	"uk-scotland": {Country: "GB", State: "SCT", Types: []string{"public", "bank"}},
	"de":          {Country: "DE", Types: []string{"public"}},
	"de-bw":       {Country: "DE", State: "BW", Types: []string{"public"}},
	"de-by":       {Country: "DE", State: "BY", Types: []string{"public"}},
	"de-be":       {Country: "DE", State: "BE", Types: []string{"public"}},
	"de-bb":       {Country: "DE", State: "BB", Types: []string{"public"}},
	"de-hb":       {Country: "DE", State: "HB", Types: []string{"public"}},
	"de-hh":       {Country: "DE", State: "HH", Types: []string{"public"}},
	"de-he":       {Country: "DE", State: "HE", Types: []string{"public"}},
	"de-mv":       {Country: "DE", State: "MV", Types: []string{"public"}},
	"de-ni":       {Country: "DE", State: "NI", Types: []string{"public"}},
	"de-nw":       {Country: "DE", State: "NW", Types: []string{"public"}},
	"de-rp":       {Country: "DE", State: "RP", Types: []string{"public"}},
	"de-sl":       {Country: "DE", State: "SL", Types: []string{"public"}},
	"de-sn":       {Country: "DE", State: "SN", Types: []string{"public"}},
	"de-st":       {Country: "DE", State: "ST", Types: []string{"public"}},
	"de-sh":       {Country: "DE", State: "SH", Types: []string{"public"}},
	"de-th":       {Country: "DE", State: "TH", Types: []string{"public"}},
	"fr":          {Country: "FR", Types: []string{"public"}},
	"jp":          {Country: "JP", Types: []string{"public"}},
	"ca":          {Country: "CA", Types: []string{"public"}},
	"au":          {Country: "AU", Types: []string{"public"}},
	"au-nsw":      {Country: "AU", State: "NSW", Types: []string{"public"}},
	"au-vic":      {Country: "AU", State: "VIC", Types: []string{"public"}},
	"in":          {Country: "IN", Types: []string{"public"}, Rules: []string{"01-26", "08-15", "10-02"}}, // the national days only
}

// notInDateHolidays are the shipped calendars date-holidays has no
// country for.
var notInDateHolidays = []string{"builtin:target2", "builtin:us-nyse"}

// conformanceYears are the years every shipped calendar is compared for.
const firstYear, lastYear = 2000, 2040

// dateHolidaysDir is the reference's npm package, from this directory.
const dateHolidaysDir = "conformance"

// TestConformanceDateHolidays compares every shipped calendar's holidays,
// 2000 to 2040, with the npm date-holidays package (the version its lock
// file pins, installed with npm ci in the test's directory): every date
// one has and the other has not must be listed in the calendar's
// about.differences against "date-holidays" with its reason, and every
// date listed there must still differ. Without npm the test is skipped,
// except under CI where it fails.
func TestConformanceDateHolidays(t *testing.T) {
	var asks []reference
	for _, name := range calendars.Names() {
		base := strings.TrimPrefix(name, calendars.Prefix)
		ref, ok := dateHolidays[base]
		if !ok {
			if !slices.Contains(notInDateHolidays, name) {
				t.Errorf("%s: no date-holidays mapping in conformance_test.go (nor listed as not there)", name)
			}
			continue
		}
		ref.Name, ref.From, ref.To = base, firstYear-1, lastYear+1
		asks = append(asks, ref)
	}
	got := runDateHolidays(t, asks)
	for _, ask := range asks {
		name := calendars.Prefix + ask.Name
		theirs := map[string]bool{}
		for _, d := range got[ask.Name] {
			theirs[d] = true
		}
		checkDifferences(t, name, "date-holidays", holidayDates(t, name), theirs)
	}
}

// checkDifferences fails on every date in one of ours and theirs but not
// the other that the calendar's about.differences does not list against
// the reference, and on every date listed there that no longer differs.
func checkDifferences(t *testing.T, name, against string, ours, theirs map[string]bool) {
	t.Helper()
	listed := listedDifferences(t, name, against)
	var unlisted, stale []string
	for d := range union(union(ours, theirs), keys(listed)) {
		if y := d[:4]; y < "2000" || y > "2040" {
			continue
		}
		differs := ours[d] != theirs[d]
		switch {
		case differs && listed[d] == "":
			side := "we have it, " + against + " has not"
			if theirs[d] {
				side = against + " has it, we have not"
			}
			unlisted = append(unlisted, d+" ("+side+")")
		case !differs && listed[d] != "":
			stale = append(stale, d)
		}
	}
	slices.Sort(unlisted)
	slices.Sort(stale)
	if len(unlisted) > 0 {
		t.Errorf("%s differs from %s on %d dates not in about.differences:\n  %s", name, against, len(unlisted), strings.Join(unlisted, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("%s: about.differences lists dates that no longer differ from %s: %s", name, against, strings.Join(stale, ", "))
	}
}

// keys is the set of m's keys.
func keys(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// runDateHolidays installs the pinned date-holidays in a copy of
// conformance/ and asks it for the holidays of asks.
func runDateHolidays(t *testing.T, asks []reference) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := npmtest.Install(ctx, t, dateHolidaysDir, "the shipped calendars' conformance test")
	in, err := json.Marshal(asks)
	if err != nil {
		t.Fatal(err)
	}
	node := exec.CommandContext(ctx, "node", "dump.mjs")
	node.Dir, node.Env, node.Stdin = dir, npmtest.Env(), bytes.NewReader(in)
	var stderr bytes.Buffer
	node.Stderr = &stderr
	out, err := node.Output()
	if err != nil {
		t.Fatalf("node dump.mjs: %v\n%s", err, stderr.Bytes())
	}
	var got map[string][]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node dump.mjs printed %.200q: %v", out, err)
	}
	return got
}

// union is the keys of a and b.
func union(a, b map[string]bool) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
