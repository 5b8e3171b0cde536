package kvstore

import (
	"fmt"
	"strings"

	"github.com/jetsched/jetsched/internal/fieldcheck"
)

// MaxTimerIDLen bounds run and step ids, in bytes. An escaped id is at most
// three times as long, so a timer's key stays well inside NATS limits.
const MaxTimerIDLen = fieldcheck.MaxTimerIDLen

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
