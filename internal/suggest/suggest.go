// Package suggest finds what a user probably meant: the name nearest to
// a mistyped one among the names that exist (subcommands, flags, config
// keys, time zones), for "did you mean" hints.
package suggest

import (
	_ "embed"
	"strings"
)

// Nearest is the name in names closest to s by edit distance (ignoring
// case), if within most edits; "" when none is. Ties go to the first.
func Nearest(s string, names []string, most int) string {
	best, bestD := "", most+1
	ls := strings.ToLower(s)
	for _, n := range names {
		if d := Distance(ls, strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// Distance is the Levenshtein distance of a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// zoneList is the IANA zone names of the tz database Go ships
// ($GOROOT/lib/time/zoneinfo.zip, the data time/tzdata embeds), one a
// line. Regenerate with:
//
//	unzip -l $(go env GOROOT)/lib/time/zoneinfo.zip | awk 'NR>3 {print $4}' | grep -v '/$' | grep -E '^[A-Z]' | grep -v -E '^(Factory|Local)$' | sort
//
//go:embed zones.txt
var zoneList string

// ZoneNames lists the IANA zone names Go knows, sorted.
func ZoneNames() []string { return strings.Fields(zoneList) }

// Zone is the known zone name nearest to a mistyped one ("Europe/Pariss"
// gives "Europe/Paris"), or "" when none is close: at most a quarter of
// the name's length in edits (two for short names), or a match ignoring
// case.
func Zone(name string) string {
	return Nearest(name, ZoneNames(), max(2, len(name)/4))
}
