package kvstore

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTimerIDLen bounds run and step ids, in bytes. An escaped id is at most
// three times as long, so a timer's key stays well inside NATS limits.
const MaxTimerIDLen = 256

// keyHex is the alphabet of the two hex digits of an escape.
const keyHex = "0123456789ABCDEF"

// keyPlain reports whether Escape keeps the byte b as it is.
func keyPlain(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}

// keyHexVal is the value of an upper-case hex digit, or -1.
func keyHexVal(b byte) int {
	switch {
	case b >= '0' && b <= '9':
		return int(b - '0')
	case b >= 'A' && b <= 'F':
		return int(b-'A') + 10
	}
	return -1
}

// EscapeTimerID encodes an id into a single KV key token (and NATS subject
// token): letters, digits, '-' and '_' stay; every other byte of the id's
// UTF-8 becomes "=" followed by two upper-case hex digits ("a.b" ->
// "a=2Eb", "é" -> "=C3=A9", "=" -> "=3D"). The encoding is injective, so
// distinct ids give distinct tokens, and the empty id gives the empty
// token (which is not a valid key token; see [ValidateID]).
func EscapeTimerID(id string) string {
	n := 0
	for i := 0; i < len(id); i++ {
		if !keyPlain(id[i]) {
			n++
		}
	}
	if n == 0 {
		return id
	}
	var b strings.Builder
	b.Grow(len(id) + 2*n)
	for i := 0; i < len(id); i++ {
		c := id[i]
		if keyPlain(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('=')
		b.WriteByte(keyHex[c>>4])
		b.WriteByte(keyHex[c&0xF])
	}
	return b.String()
}

// unescapeTimerID reverses [EscapeTimerID]. It accepts exactly the tokens Escape
// produces: an invalid escape ('=' not followed by two upper-case hex
// digits, or escaping a byte Escape keeps as it is) and any byte outside
// letters, digits, '-', '_' and '=' are errors. unescapeTimerID("") is "".
func unescapeTimerID(token string) (string, error) {
	n := strings.Count(token, "=")
	if n == 0 {
		for i := 0; i < len(token); i++ {
			if !keyPlain(token[i]) {
				return "", keyTokenError(token, i)
			}
		}
		return token, nil
	}
	out := make([]byte, 0, len(token))
	for i := 0; i < len(token); i++ {
		c := token[i]
		if keyPlain(c) {
			out = append(out, c)
			continue
		}
		if c != '=' {
			return "", keyTokenError(token, i)
		}
		if i+2 >= len(token) {
			return "", fmt.Errorf("wakeup: key token %q: escape at byte %d: want '=' and two upper-case hex digits", token, i)
		}
		hi, lo := keyHexVal(token[i+1]), keyHexVal(token[i+2])
		if hi < 0 || lo < 0 {
			return "", fmt.Errorf("wakeup: key token %q: escape %q at byte %d: want '=' and two upper-case hex digits", token, token[i:i+3], i)
		}
		v := byte(hi<<4 | lo)
		if keyPlain(v) {
			return "", fmt.Errorf("wakeup: key token %q: escape %q at byte %d: %q is not escaped", token, token[i:i+3], i, v)
		}
		out = append(out, v)
		i += 2
	}
	return string(out), nil
}

// keyTokenError reports a byte that no escaped token holds.
func keyTokenError(token string, i int) error {
	return fmt.Errorf("wakeup: key token %q: byte %q at %d is not allowed (want letters, digits, '-', '_' and '=' escapes)", token, token[i], i)
}

// TimerKey is the timer's key in sched_wakeups: EscapeTimerID(run) + "." +
// EscapeTimerID(step), exactly two key tokens whatever characters the ids hold.
func TimerKey(run, step string) string {
	return EscapeTimerID(run) + "." + EscapeTimerID(step)
}

// SplitTimerKey reverses [Key]: the key must be two non-empty tokens joined by
// one '.', each a valid escape (see [Unescape]). It does not apply
// [ValidateID]'s length and UTF-8 rules.
func SplitTimerKey(key string) (run, step string, err error) {
	r, s, ok := strings.Cut(key, ".")
	if !ok || r == "" || s == "" || strings.Contains(s, ".") {
		return "", "", fmt.Errorf("wakeup: key %q: want <run>.<step>, two non-empty tokens", key)
	}
	if run, err = unescapeTimerID(r); err != nil {
		return "", "", fmt.Errorf("wakeup: key %q: run: %w", key, err)
	}
	if step, err = unescapeTimerID(s); err != nil {
		return "", "", fmt.Errorf("wakeup: key %q: step: %w", key, err)
	}
	return run, step, nil
}

// TimerRunFilter is the KV watch (and list) filter for every timer of a run:
// EscapeTimerID(run) + ".*". Because the run is escaped into one token, the filter
// of run "a" does not match the timers of run "a.b" (whose token is
// "a=2Eb").
func TimerRunFilter(run string) string {
	return EscapeTimerID(run) + ".*"
}

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
		return keyPlain(byte(r)) || strings.IndexByte(timerIDPunct, byte(r)) >= 0
	}
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// ValidateTimerID checks a run or step id: non-empty, at most
// [MaxTimerIDLen] bytes, valid UTF-8, and every character in the allowed
// set (see timerIDRune: ASCII letters, digits and the punctuation
// " .,:;/@+=#~!$%&()[]'-_", and non-ASCII letters, marks, numbers,
// punctuation and symbols), with no space at either end. The id travels
// in the Sched-Run and Sched-Step headers and in logs, where CR, LF, NUL
// and wildcards would be read as something else. Errors name the field,
// which is "run" or "step", and the character, for example
//
//	wakeup: run "a\r\nb": character '\r' at byte 1 is not allowed (...)
func ValidateTimerID(field, id string) error {
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
