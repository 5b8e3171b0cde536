package cronx_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// TestDSTPolicies pins down every gap and overlap policy, with fixed
// instants around the 2026 transitions of zones chosen for their awkward
// rules: whole-hour changes (New York, London), a 30-minute change
// (Lord_Howe), a 2-hour gap (Troll), changes at midnight (Santiago) and a
// zone with its own dates (Hebron).
func TestDSTPolicies(t *testing.T) {
	type tc struct {
		zone    string
		expr    string
		gap     cronx.GapPolicy
		overlap cronx.OverlapPolicy
		after   string
		want    []string // RFC 3339 with offsets; "why" words after a space
	}
	n, s, sh := cronx.GapNatural, cronx.GapSkip, cronx.GapShift
	on, once, twice := cronx.OverlapNatural, cronx.OverlapOnce, cronx.OverlapTwice
	tests := []tc{
		// New York, 2026-03-08 02:00 EST -> 03:00 EDT.
		{"America/New_York", "30 2 * * *", n, on, "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:00:00-04:00 moved", "2026-03-09T02:30:00-04:00"}},
		{"America/New_York", "30 2 * * *", s, on, "2026-03-07T12:00:00-05:00", []string{"2026-03-09T02:30:00-04:00"}},
		{"America/New_York", "30 2 * * *", sh, on, "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:30:00-04:00 shifted", "2026-03-09T02:30:00-04:00"}},
		{"America/New_York", "*/15 * * * *", n, on, "2026-03-08T01:40:00-05:00", []string{"2026-03-08T01:45:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:15:00-04:00"}},
		{"America/New_York", "0,30 2 * * *", n, on, "2026-03-07T12:00:00-05:00", []string{"2026-03-09T02:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"America/New_York", "0,30 2 * * *", sh, on, "2026-03-07T12:00:00-05:00", []string{"2026-03-08T03:00:00-04:00 shifted", "2026-03-08T03:30:00-04:00 shifted", "2026-03-09T02:00:00-04:00"}},
		// New York, 2026-11-01 02:00 EDT -> 01:00 EST.
		{"America/New_York", "30 1 * * *", n, on, "2026-10-31T12:00:00-04:00", []string{"2026-11-01T01:30:00-04:00 first", "2026-11-02T01:30:00-05:00"}},
		{"America/New_York", "30 1 * * *", n, once, "2026-10-31T12:00:00-04:00", []string{"2026-11-01T01:30:00-04:00 first", "2026-11-02T01:30:00-05:00"}},
		{"America/New_York", "30 1 * * *", n, twice, "2026-10-31T12:00:00-04:00", []string{"2026-11-01T01:30:00-04:00 first", "2026-11-01T01:30:00-05:00 repeated", "2026-11-02T01:30:00-05:00"}},
		{"America/New_York", "30 * * * *", n, on, "2026-11-01T00:00:00-04:00", []string{"2026-11-01T00:30:00-04:00", "2026-11-01T01:30:00-04:00 first", "2026-11-01T01:30:00-05:00 repeated", "2026-11-01T02:30:00-05:00"}},
		// once, as cronie: a wildcard hour keeps firing in both offsets.
		{"America/New_York", "30 * * * *", n, once, "2026-11-01T00:00:00-04:00", []string{"2026-11-01T00:30:00-04:00", "2026-11-01T01:30:00-04:00 first", "2026-11-01T01:30:00-05:00 repeated", "2026-11-01T02:30:00-05:00"}},
		// Sao Paulo, DST ended at midnight: 2019-02-17 00:00 (-02) ->
		// 2019-02-16 23:00 (-03), so 23:00-23:59 on the 16th happens
		// twice. once, as cronie: a wildcard or stepped minute or hour
		// fires through the repeated hour; a fixed wall time once.
		{"America/Sao_Paulo", "*/15 * * * *", n, once, "2019-02-16T22:50:00-02:00", []string{"2019-02-16T23:00:00-02:00 first", "2019-02-16T23:15:00-02:00 first", "2019-02-16T23:30:00-02:00 first", "2019-02-16T23:45:00-02:00 first",
			"2019-02-16T23:00:00-03:00 repeated", "2019-02-16T23:15:00-03:00 repeated", "2019-02-16T23:30:00-03:00 repeated", "2019-02-16T23:45:00-03:00 repeated", "2019-02-17T00:00:00-03:00"}},
		{"America/Sao_Paulo", "30 * * * *", n, once, "2019-02-16T22:00:00-02:00", []string{"2019-02-16T22:30:00-02:00", "2019-02-16T23:30:00-02:00 first", "2019-02-16T23:30:00-03:00 repeated", "2019-02-17T00:30:00-03:00"}},
		{"America/Sao_Paulo", "*/20 23 * * *", n, once, "2019-02-16T22:00:00-02:00", []string{"2019-02-16T23:00:00-02:00 first", "2019-02-16T23:20:00-02:00 first", "2019-02-16T23:40:00-02:00 first",
			"2019-02-16T23:00:00-03:00 repeated", "2019-02-16T23:20:00-03:00 repeated", "2019-02-16T23:40:00-03:00 repeated", "2019-02-17T23:00:00-03:00"}},
		{"America/Sao_Paulo", "30 23 * * *", n, once, "2019-02-16T12:00:00-02:00", []string{"2019-02-16T23:30:00-02:00 first", "2019-02-17T23:30:00-03:00"}},
		{"America/Sao_Paulo", "0,30 23 * * *", n, once, "2019-02-16T12:00:00-02:00", []string{"2019-02-16T23:00:00-02:00 first", "2019-02-16T23:30:00-02:00 first", "2019-02-17T23:00:00-03:00"}},
		// natural, for contrast: the hour is fixed, so the stepped minute
		// fires in the first offset only.
		{"America/Sao_Paulo", "*/20 23 * * *", n, on, "2019-02-16T22:00:00-02:00", []string{"2019-02-16T23:00:00-02:00 first", "2019-02-16T23:20:00-02:00 first", "2019-02-16T23:40:00-02:00 first", "2019-02-17T23:00:00-03:00"}},
		{"America/Sao_Paulo", "*/20 23 * * *", n, twice, "2019-02-16T23:30:00-02:00", []string{"2019-02-16T23:40:00-02:00 first", "2019-02-16T23:00:00-03:00 repeated"}},
		// London, 2026-03-29 01:00 GMT -> 02:00 BST; 2026-10-25 02:00 BST -> 01:00 GMT.
		{"Europe/London", "*/30 * * * *", n, once, "2026-10-25T00:00:00+01:00", []string{"2026-10-25T00:30:00+01:00", "2026-10-25T01:00:00+01:00 first", "2026-10-25T01:30:00+01:00 first", "2026-10-25T01:00:00Z repeated", "2026-10-25T01:30:00Z repeated", "2026-10-25T02:00:00Z"}},
		{"Europe/London", "15 */1 * * *", n, once, "2026-10-25T01:00:00+01:00", []string{"2026-10-25T01:15:00+01:00 first", "2026-10-25T01:15:00Z repeated", "2026-10-25T02:15:00Z"}},
		{"Europe/London", "* 1 * * *", n, once, "2026-10-25T01:58:30+01:00", []string{"2026-10-25T01:59:00+01:00 first", "2026-10-25T01:00:00Z repeated", "2026-10-25T01:01:00Z repeated"}},
		{"Europe/London", "*/20 30 1 * * *", n, once, "2026-10-25T01:30:30+01:00", []string{"2026-10-25T01:30:40+01:00 first", "2026-10-25T01:30:00Z repeated", "2026-10-25T01:30:20Z repeated"}},
		{"Europe/London", "30 1 * * *", n, once, "2026-10-24T12:00:00+01:00", []string{"2026-10-25T01:30:00+01:00 first", "2026-10-26T01:30:00Z"}},
		{"Europe/London", "0,30 1 * * *", n, once, "2026-10-24T12:00:00+01:00", []string{"2026-10-25T01:00:00+01:00 first", "2026-10-25T01:30:00+01:00 first", "2026-10-26T01:00:00Z"}},
		{"Europe/London", "30 1 * * *", n, on, "2026-03-28T12:00:00Z", []string{"2026-03-29T02:00:00+01:00 moved", "2026-03-30T01:30:00+01:00"}},
		{"Europe/London", "30 1 * * *", sh, on, "2026-03-28T12:00:00Z", []string{"2026-03-29T02:30:00+01:00 shifted"}},
		{"Europe/London", "30 1 * * *", s, on, "2026-03-28T12:00:00Z", []string{"2026-03-30T01:30:00+01:00"}},
		{"Europe/London", "30 1 * * *", n, twice, "2026-10-24T12:00:00+01:00", []string{"2026-10-25T01:30:00+01:00 first", "2026-10-25T01:30:00Z repeated", "2026-10-26T01:30:00Z"}},
		// Lord Howe: 30-minute changes. 2026-10-04 02:00 -> 02:30 (+11);
		// 2026-04-05 02:00 (+11) -> 01:30 (+10:30).
		{"Australia/Lord_Howe", "15 2 * * *", n, on, "2026-10-03T12:00:00+10:30", []string{"2026-10-04T02:30:00+11:00 moved", "2026-10-05T02:15:00+11:00"}},
		{"Australia/Lord_Howe", "15 2 * * *", sh, on, "2026-10-03T12:00:00+10:30", []string{"2026-10-04T02:45:00+11:00 shifted"}},
		{"Australia/Lord_Howe", "15 2 * * *", s, on, "2026-10-03T12:00:00+10:30", []string{"2026-10-05T02:15:00+11:00"}},
		{"Australia/Lord_Howe", "45 1 * * *", n, on, "2026-04-04T12:00:00+11:00", []string{"2026-04-05T01:45:00+11:00 first", "2026-04-06T01:45:00+10:30"}},
		{"Australia/Lord_Howe", "45 1 * * *", n, twice, "2026-04-04T12:00:00+11:00", []string{"2026-04-05T01:45:00+11:00 first", "2026-04-05T01:45:00+10:30 repeated"}},
		{"Australia/Lord_Howe", "*/20 * * * *", n, on, "2026-04-05T01:25:00+11:00", []string{"2026-04-05T01:40:00+11:00 first", "2026-04-05T01:40:00+10:30 repeated", "2026-04-05T02:00:00+10:30"}},
		// Troll: a 2-hour gap, 2026-03-29 01:00 (+00) -> 03:00 (+02), and
		// 2026-10-25 03:00 (+02) -> 01:00 (+00).
		{"Antarctica/Troll", "30 1 * * *", n, on, "2026-03-28T12:00:00Z", []string{"2026-03-29T03:00:00+02:00 moved", "2026-03-30T01:30:00+02:00"}},
		{"Antarctica/Troll", "30 2 * * *", n, on, "2026-03-28T12:00:00Z", []string{"2026-03-29T03:00:00+02:00 moved"}},
		{"Antarctica/Troll", "30 1 * * *", sh, on, "2026-03-28T12:00:00Z", []string{"2026-03-29T03:30:00+02:00 shifted"}},
		{"Antarctica/Troll", "30 2 * * *", sh, on, "2026-03-28T12:00:00Z", []string{"2026-03-29T04:30:00+02:00 shifted"}},
		{"Antarctica/Troll", "30 2 * * *", s, on, "2026-03-28T12:00:00Z", []string{"2026-03-30T02:30:00+02:00"}},
		{"Antarctica/Troll", "30 2 * * *", n, on, "2026-10-24T12:00:00+02:00", []string{"2026-10-25T02:30:00+02:00 first", "2026-10-26T02:30:00Z"}},
		{"Antarctica/Troll", "30 2 * * *", n, twice, "2026-10-24T12:00:00+02:00", []string{"2026-10-25T02:30:00+02:00 first", "2026-10-25T02:30:00Z repeated"}},
		// Santiago: changes at midnight. 2026-09-06 00:00 (-04) -> 01:00
		// (-03); 2026-04-05 00:00 (-03) -> 2026-04-04 23:00 (-04).
		{"America/Santiago", "0 0 * * *", n, on, "2026-09-05T12:00:00-04:00", []string{"2026-09-06T01:00:00-03:00 moved", "2026-09-07T00:00:00-03:00"}},
		{"America/Santiago", "0 0 * * *", s, on, "2026-09-05T12:00:00-04:00", []string{"2026-09-07T00:00:00-03:00"}},
		{"America/Santiago", "30 0 * * *", sh, on, "2026-09-05T12:00:00-04:00", []string{"2026-09-06T01:30:00-03:00 shifted"}},
		{"America/Santiago", "30 23 * * *", n, on, "2026-04-04T12:00:00-03:00", []string{"2026-04-04T23:30:00-03:00 first", "2026-04-05T23:30:00-04:00"}},
		{"America/Santiago", "30 23 * * *", n, twice, "2026-04-04T12:00:00-03:00", []string{"2026-04-04T23:30:00-03:00 first", "2026-04-04T23:30:00-04:00 repeated", "2026-04-05T23:30:00-04:00"}},
		{"America/Santiago", "@daily", n, on, "2026-04-03T12:00:00-03:00", []string{"2026-04-04T00:00:00-03:00", "2026-04-05T00:00:00-04:00"}},
		// Hebron: 2026-03-28 02:00 (+02) -> 03:00 (+03).
		{"Asia/Hebron", "30 2 * * *", n, on, "2026-03-27T12:00:00+02:00", []string{"2026-03-28T03:00:00+03:00 moved", "2026-03-29T02:30:00+03:00"}},
		{"Asia/Hebron", "30 1 * * *", n, twice, "2026-10-23T12:00:00+03:00", []string{"2026-10-24T01:30:00+03:00 first", "2026-10-24T01:30:00+02:00 repeated"}},
	}
	for _, tt := range tests {
		name := tt.zone + " " + tt.expr + " gap=" + tt.gap.String() + " overlap=" + tt.overlap.String()
		t.Run(name, func(t *testing.T) {
			loc := mustZone(t, tt.zone)
			c, err := cronx.NewCron(tt.expr, cronx.Options{Location: loc, Gap: tt.gap, Overlap: tt.overlap})
			if err != nil {
				t.Fatal(err)
			}
			after := ts(t, tt.after)
			for i, w := range tt.want {
				wantTime, why, _ := strings.Cut(w, " ")
				got, adj := c.NextExplained(after)
				want := ts(t, wantTime)
				if !got.Equal(want) {
					t.Fatalf("fire %d after %s: got %s, want %s", i, after.Format(time.RFC3339), got.Format(time.RFC3339), wantTime)
				}
				if _, off := got.Zone(); func() int { _, o := want.Zone(); return o }() != off {
					t.Fatalf("fire %d: offset of %s, want that of %s", i, got.Format(time.RFC3339), wantTime)
				}
				if adj.Kind != why {
					t.Fatalf("fire %d at %s: adjustment %q (%s), want %q", i, wantTime, adj.Kind, adj, why)
				}
				if got.Location() != loc {
					t.Fatalf("fire %d not in %s", i, tt.zone)
				}
				after = got
			}
		})
	}
}

// TestDSTNoRepeatsNoLoops walks a year of several schedules through every
// policy in each zone and checks that Next always moves forward and that
// two consecutive results are never the same instant.
func TestDSTNoRepeatsNoLoops(t *testing.T) {
	zones := []string{"America/New_York", "Europe/London", "Australia/Lord_Howe", "Antarctica/Troll", "America/Santiago", "Asia/Hebron"}
	exprs := []string{"30 2 * * *", "0 0 * * *", "*/10 * * * *", "15 1,2 * * *", "0 23 * * *", "*/20 1,23 * * *", "0 22-2 * * *"}
	for _, zn := range zones {
		loc := mustZone(t, zn)
		for _, expr := range exprs {
			for _, gap := range []cronx.GapPolicy{cronx.GapNatural, cronx.GapSkip, cronx.GapShift} {
				for _, ov := range []cronx.OverlapPolicy{cronx.OverlapNatural, cronx.OverlapOnce, cronx.OverlapTwice} {
					c, err := cronx.NewCron(expr, cronx.Options{Location: loc, Gap: gap, Overlap: ov})
					if err != nil {
						t.Fatal(err)
					}
					after := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
					stop := after.AddDate(1, 0, 0)
					for after.Before(stop) {
						next := c.Next(after)
						if !next.After(after) || next.Sub(after) > 49*time.Hour {
							t.Fatalf("%s %q gap=%s overlap=%s: Next(%s) = %s", zn, expr, gap, ov, after.Format(time.RFC3339), next.Format(time.RFC3339))
						}
						after = next
					}
				}
			}
		}
	}
}
