// Package jsonenc writes the JSON of the records written on every fire
// (the state record, and the window record once per window) without
// reflection. The output is what encoding/json gives for the same value
// with HTML escaping off (json.Encoder with SetEscapeHTML(false), without
// the newline): numbers as encoding/json formats them, times as
// time.Time.MarshalJSON writes them, and strings escaped as it escapes
// them, except that <, > and & are written as they are, so that `nats kv
// get` shows them. The callers write the fields in their struct order
// with their omitempty and omitzero rules; their tests check each field
// against encoding/json.
package jsonenc

import (
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Encoder appends one record's JSON to B. Its methods write one field
// each, in the order they are called; the first field that cannot be
// written sets err, and Result then discards the output.
type Encoder struct {
	// B is the JSON so far: the caller's buffer and the record's '{'.
	B   []byte
	err error
	// in names the object being written for errors ("claim."), or is
	// empty at the top level.
	in string
}

// Result is the record's JSON, or orig unchanged and the first error
// (naming the field), which the caller wraps with the record's name.
func (e *Encoder) Result(orig []byte) ([]byte, error) {
	if e.err != nil {
		// appends write past len(orig) only: orig is as it was
		return orig, e.err
	}
	return e.B, nil
}

// Key appends key (`"name":`), after a comma unless it is the first
// field of the object being written.
func (e *Encoder) Key(key string) {
	if e.B[len(e.B)-1] != '{' {
		e.B = append(e.B, ',')
	}
	e.B = append(e.B, key...)
}

// Open starts an object as the value of key; in names it in errors.
func (e *Encoder) Open(key, in string) {
	e.Key(key)
	e.B = append(e.B, '{')
	e.in = in
}

// Element starts an object in an array, after a comma unless it is the
// first; in names it in errors.
func (e *Encoder) Element(in string) {
	if e.B[len(e.B)-1] != '[' {
		e.B = append(e.B, ',')
	}
	e.B = append(e.B, '{')
	e.in = in
}

// Close ends the object open or element started.
func (e *Encoder) Close() {
	e.B = append(e.B, '}')
	e.in = ""
}

// Str writes a string field, or nothing when omitEmpty and s is "".
func (e *Encoder) Str(key, s string, omitEmpty bool) {
	if omitEmpty && s == "" {
		return
	}
	e.Key(key)
	e.B = AppendString(e.B, s)
}

// Uint writes an unsigned number, or nothing when omitEmpty and n is 0.
func (e *Encoder) Uint(key string, n uint64, omitEmpty bool) {
	if omitEmpty && n == 0 {
		return
	}
	e.Key(key)
	e.B = strconv.AppendUint(e.B, n, 10)
}

// Int writes a number, or nothing when omitEmpty and n is 0.
func (e *Encoder) Int(key string, n int64, omitEmpty bool) {
	if omitEmpty && n == 0 {
		return
	}
	e.Key(key)
	e.B = strconv.AppendInt(e.B, n, 10)
}

// Flag writes an omitempty bool: true, or nothing.
func (e *Encoder) Flag(key string, v bool) {
	if v {
		e.Key(key)
		e.B = append(e.B, "true"...)
	}
}

// Float writes f as encoding/json writes a float64 (see appendFloat).
func (e *Encoder) Float(key string, f float64) {
	if e.err != nil {
		return
	}
	e.Key(key)
	var err error
	if e.B, err = appendFloat(e.B, f); err != nil {
		e.fail(key, err)
	}
}

// Time writes t as time.Time.MarshalJSON writes it, or nothing when
// omitZero and t.IsZero() (the omitzero option).
func (e *Encoder) Time(key string, t time.Time, omitZero bool) {
	if e.err != nil || omitZero && t.IsZero() {
		return
	}
	e.Key(key)
	e.B = append(e.B, '"')
	// AppendText is MarshalJSON without the quotes: strict RFC 3339 with
	// nanoseconds, refusing the years and offsets RFC 3339 cannot write.
	// Its output never needs escaping.
	b, err := t.AppendText(e.B)
	if err != nil {
		e.fail(key, err)
		return
	}
	e.B = append(b, '"')
}

// fail records the first error, naming the field.
func (e *Encoder) fail(key string, err error) {
	e.err = fmt.Errorf("%s%s: %w", e.in, key[1:len(key)-2], err)
}

// appendFloat appends f as encoding/json formats a float64: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from 1e21
// on (as ES6 does), with the exponent unpadded.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("unsupported number %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// AppendString appends s as a JSON string, escaped as encoding/json
// escapes it with HTML escaping off.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// valid JSON, but not valid JavaScript: escaped, as
			// encoding/json always does
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
