package fieldcheck

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTimerIDLen bounds run and step ids, in bytes (kvstore.MaxTimerIDLen).
const MaxTimerIDLen = 256

// timerIDPunct is the ASCII punctuation a run or step id may hold besides
// '-' and '_' (a space only inside). Left out: control characters, the
// subject wildcards '*' and '>', and '"', '\', '<', '?', '`', '^', '|',
// '{' and '}', which other systems' ids and shells treat specially.
const timerIDPunct = " .,:;/@+=#~!$%&()[]'"

// timerIDRune reports whether r may appear in a run or step id: ASCII
// letters, digits, '-', '_' and timerIDPunct, and beyond ASCII any letter,
// mark, number, punctuation or symbol ("étape", "注文", "✓"), but no
// control, format (bidi overrides, zero-width), space or separator
// character.
func timerIDRune(r rune) bool {
	if r < utf8.RuneSelf {
		return plainByte(byte(r)) || strings.IndexByte(timerIDPunct, byte(r)) >= 0
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// TimerID checks a run or step id: non-empty, at most
// [MaxTimerIDLen] bytes, valid UTF-8, and every character in the allowed
// set (see timerIDRune: ASCII letters, digits and the punctuation
// " .,:;/@+=#~!$%&()[]'-_", and non-ASCII letters, marks, numbers,
// punctuation and symbols), with no space at either end. The id travels
// in the Sched-Run and Sched-Step headers and in logs, where CR, LF, NUL
// and wildcards would be read as something else. Errors name the field,
// which is "run" or "step", and the character, for example
//
//	wakeup: run "a\r\nb": character '\r' at byte 1 is not allowed (...)
func TimerID(field, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("wakeup: %s %q: must not be empty", field, id)
	case len(id) > MaxTimerIDLen:
		return fmt.Errorf("wakeup: %s %q: longer than %d bytes", field, keyPrefix(id, 32)+"…", MaxTimerIDLen)
	case !utf8.ValidString(id):
		return fmt.Errorf("wakeup: %s %q: not valid UTF-8", field, keyPrefix(id, 32))
	case id[0] == ' ' || id[len(id)-1] == ' ':
		return fmt.Errorf("wakeup: %s %q: a space at either end is not allowed", field, keyPrefix(id, 32))
	}
	for i, r := range id {
		if !timerIDRune(r) {
			return fmt.Errorf("wakeup: %s %q: character %q at byte %d is not allowed (letters, digits, spaces inside, and %s-_)",
				field, keyPrefix(id, 32), r, i, timerIDPunct[1:])
		}
	}
	return nil
}

// keyPrefix is at most n bytes of s, cut at a rune boundary.
func keyPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// plainByte reports whether b is an ASCII letter, digit, '-' or '_'.
func plainByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}
