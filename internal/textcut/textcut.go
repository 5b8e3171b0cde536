// Package textcut cuts text for messages, headers and logs on a rune
// boundary, marking the cut.
package textcut

import "unicode/utf8"

// Cut returns s cut to at most n bytes with mark appended when it was cut
// (the mark counts against n when it fits); a cut never splits a rune.
func Cut(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	if len(mark) < n {
		n -= len(mark)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}
