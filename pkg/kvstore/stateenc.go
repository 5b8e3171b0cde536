package kvstore

import (
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// This file encodes the records written on every fire (State, and Window
// once per window) without reflection. The output is what encoding/json
// gives for the same value with HTML escaping off (json.Encoder with
// SetEscapeHTML(false), without the newline): the same field names in the
// same order, the same omitempty and omitzero rules, times as
// time.Time.MarshalJSON writes them (RFC 3339, nanoseconds without
// trailing zeros), numbers as encoding/json formats them, and strings
// escaped as it escapes them (", \, control characters, U+2028 and U+2029;
// invalid UTF-8 replaced by U+FFFD), except that <, > and & are written as
// they are, so that `nats kv get` shows them. Both forms decode to the
// same value. stateenc_test.go checks every field against encoding/json.

// stateSizeHint and stateObjectSizeHint size State.Encode's buffer: a
// fire's record is about 290 bytes plus its plan, and each pause,
// trigger, backfill or running fire adds at most about 200 (with short
// notes), so that one allocation holds the record.
const (
	stateSizeHint       = 384
	stateObjectSizeHint = 200
)

// sizeHint is the buffer Encode starts with.
func (s State) sizeHint() int {
	n := stateSizeHint + len(s.Plan) + len(s.Triggers)*stateObjectSizeHint/2
	for _, set := range [...]bool{s.Paused != nil, s.Backfill != nil, s.Running != nil} {
		if set {
			n += stateObjectSizeHint
		}
	}
	return n
}

// windowSizeHint and windowSlotSizeHint size Window.Encode's buffer: the
// fields around the slots, and a slot (about 60 bytes with a short id).
const (
	windowSizeHint     = 192
	windowSlotSizeHint = 80
)

// AppendJSON appends the record's JSON to b and returns the extended
// buffer. It fails, like json.Marshal, on a time whose year is outside
// [0, 9999] or whose zone offset is 24 hours or more, and on a backfill
// rate that is NaN or infinite, with an error that wraps ErrInvalid and
// names the field; b is returned unchanged then.
func (s State) AppendJSON(b []byte) ([]byte, error) {
	e := encoder{b: append(b, '{')}
	e.time(`"next":`, s.Next, true)
	e.time(`"next_nominal":`, s.NextNominal, true)
	e.str(`"next_reason":`, s.NextReason, true)
	e.str(`"plan":`, s.Plan, false)
	if c := s.Claim; c != nil {
		e.open(`"claim":`, "claim.")
		e.time(`"slot":`, c.Slot, false)
		e.str(`"token":`, c.Token, false)
		e.str(`"owner":`, c.Owner, false)
		e.time(`"at":`, c.At, false)
		e.time(`"expires":`, c.Expires, false)
		e.str(`"reason":`, c.Reason, true)
		e.str(`"note":`, c.Note, true)
		e.time(`"nominal":`, c.Nominal, true)
		e.str(`"slot_id":`, c.SlotID, true)
		e.str(`"cancel":`, c.Cancel, true)
		e.uint(`"seq":`, c.Seq, true)
		e.str(`"window":`, c.Window, true)
		e.trace(`"trace":`, c.Trace)
		e.close()
	}
	e.uint(`"fires":`, s.Fires, false)
	e.uint(`"missed":`, s.Missed, true)
	e.flag(`"missed_at_least":`, s.MissedAtLeast)
	e.uint(`"skipped":`, s.Skipped, true)
	e.flag(`"ended":`, s.Ended)
	e.time(`"updated_at":`, s.UpdatedAt, true)
	if p := s.Paused; p != nil {
		e.open(`"paused":`, "paused.")
		e.str(`"note":`, p.Note, true)
		e.time(`"at":`, p.At, false)
		e.time(`"until":`, p.Until, true)
		e.close()
	}
	e.time(`"resumed_at":`, s.ResumedAt, true)
	e.int(`"skip_next":`, int64(s.SkipNext), true)
	if len(s.Triggers) > 0 {
		e.key(`"triggers":`)
		e.b = append(e.b, '[')
		for i := range s.Triggers {
			t := &s.Triggers[i]
			e.element("triggers[].")
			e.time(`"at":`, t.At, false)
			e.str(`"note":`, t.Note, true)
			e.trace(`"trace":`, t.Trace)
			e.close()
		}
		e.b = append(e.b, ']')
	}
	if f := s.Backfill; f != nil {
		e.open(`"backfill":`, "backfill.")
		e.time(`"from":`, f.From, false)
		e.time(`"to":`, f.To, false)
		e.time(`"cursor":`, f.Cursor, true)
		e.float(`"rate":`, f.Rate)
		e.time(`"not_before":`, f.NotBefore, true)
		e.str(`"note":`, f.Note, true)
		e.int(`"total":`, int64(f.Total), true)
		e.int(`"done":`, int64(f.Done), true)
		e.close()
	}
	if r := s.Running; r != nil {
		e.open(`"running":`, "running.")
		e.str(`"slot_id":`, r.SlotID, false)
		e.time(`"slot":`, r.Slot, false)
		e.time(`"since":`, r.Since, false)
		e.time(`"deadline":`, r.Deadline, false)
		e.close()
	}
	e.time(`"last_done":`, s.LastDone, true)
	e.str(`"owner":`, s.Owner, true)
	e.close()
	return e.result(b, "state record")
}

// MarshalJSON implements json.Marshaler with AppendJSON, so that a State
// in an API answer is encoded without reflection too. encoding/json
// re-escapes its output as it escapes everything else (HTML-safe by
// default), so such answers are the same bytes as before.
func (s State) MarshalJSON() ([]byte, error) { return s.Encode() }

// AppendJSON appends the window record's JSON to b and returns the
// extended buffer, in the form State.AppendJSON describes. It fails, like
// json.Marshal, on a time whose year is outside [0, 9999] or whose zone
// offset is 24 hours or more, with an error that wraps ErrInvalid; b is
// returned unchanged then.
func (w Window) AppendJSON(b []byte) ([]byte, error) {
	e := encoder{b: append(b, '{')}
	e.int(`"shard":`, int64(w.Shard), false)
	e.uint(`"seq":`, w.Seq, false)
	e.str(`"token":`, w.Token, false)
	e.str(`"owner":`, w.Owner, false)
	e.time(`"at":`, w.At, false)
	e.time(`"expires":`, w.Expires, false)
	e.key(`"slots":`)
	if w.Slots == nil {
		e.b = append(e.b, "null"...) // as encoding/json writes a nil slice
	} else {
		e.b = append(e.b, '[')
		for i := range w.Slots {
			s := &w.Slots[i]
			e.element("slots[].")
			e.str(`"schedule":`, s.Schedule, false)
			e.time(`"slot":`, s.Slot, false)
			e.str(`"reason":`, s.Reason, true)
			e.close()
		}
		e.b = append(e.b, ']')
	}
	e.close()
	return e.result(b, "window record")
}

// encoder appends one record's JSON to b. Its methods write one field
// each, in the order they are called; the first field that cannot be
// written sets err, and result then discards the output.
type encoder struct {
	b   []byte
	err error
	// in names the object being written for errors ("claim."), or is
	// empty at the top level.
	in string
}

// result is the record's JSON, or orig unchanged and the first error.
func (e *encoder) result(orig []byte, record string) ([]byte, error) {
	if e.err != nil {
		// appends write past len(orig) only: orig is as it was
		return orig, fmt.Errorf("%w: %s: %w", ErrInvalid, record, e.err)
	}
	return e.b, nil
}

// key appends key (`"name":`), after a comma unless it is the first
// field of the object being written.
func (e *encoder) key(key string) {
	if e.b[len(e.b)-1] != '{' {
		e.b = append(e.b, ',')
	}
	e.b = append(e.b, key...)
}

// open starts an object as the value of key; in names it in errors.
func (e *encoder) open(key, in string) {
	e.key(key)
	e.b = append(e.b, '{')
	e.in = in
}

// element starts an object in an array, after a comma unless it is the
// first; in names it in errors.
func (e *encoder) element(in string) {
	if e.b[len(e.b)-1] != '[' {
		e.b = append(e.b, ',')
	}
	e.b = append(e.b, '{')
	e.in = in
}

// close ends the object open or element started.
func (e *encoder) close() {
	e.b = append(e.b, '}')
	e.in = ""
}

// str writes a string field, or nothing when omitEmpty and s is "".
func (e *encoder) str(key, s string, omitEmpty bool) {
	if omitEmpty && s == "" {
		return
	}
	e.key(key)
	e.b = appendString(e.b, s)
}

// trace writes an omitempty trace context: {"traceparent":...,
// "tracestate":...}, or nothing when t is nil. It stays inside the object
// being written for errors (it cannot fail).
func (e *encoder) trace(key string, t *TraceContext) {
	if t == nil {
		return
	}
	e.key(key)
	e.b = append(e.b, `{"traceparent":`...)
	e.b = appendString(e.b, t.TraceParent)
	if t.TraceState != "" {
		e.b = append(e.b, `,"tracestate":`...)
		e.b = appendString(e.b, t.TraceState)
	}
	e.b = append(e.b, '}')
}

// uint writes an unsigned number, or nothing when omitEmpty and n is 0.
func (e *encoder) uint(key string, n uint64, omitEmpty bool) {
	if omitEmpty && n == 0 {
		return
	}
	e.key(key)
	e.b = strconv.AppendUint(e.b, n, 10)
}

// int writes a number, or nothing when omitEmpty and n is 0.
func (e *encoder) int(key string, n int64, omitEmpty bool) {
	if omitEmpty && n == 0 {
		return
	}
	e.key(key)
	e.b = strconv.AppendInt(e.b, n, 10)
}

// flag writes an omitempty bool: true, or nothing.
func (e *encoder) flag(key string, v bool) {
	if v {
		e.key(key)
		e.b = append(e.b, "true"...)
	}
}

// float writes f as encoding/json writes a float64 (see appendFloat).
func (e *encoder) float(key string, f float64) {
	if e.err != nil {
		return
	}
	e.key(key)
	var err error
	if e.b, err = appendFloat(e.b, f); err != nil {
		e.fail(key, err)
	}
}

// time writes t as time.Time.MarshalJSON writes it, or nothing when
// omitZero and t.IsZero() (the omitzero option).
func (e *encoder) time(key string, t time.Time, omitZero bool) {
	if e.err != nil || omitZero && t.IsZero() {
		return
	}
	e.key(key)
	e.b = append(e.b, '"')
	// AppendText is MarshalJSON without the quotes: strict RFC 3339 with
	// nanoseconds, refusing the years and offsets RFC 3339 cannot write.
	// Its output never needs escaping.
	b, err := t.AppendText(e.b)
	if err != nil {
		e.fail(key, err)
		return
	}
	e.b = append(b, '"')
}

// fail records the first error, naming the field.
func (e *encoder) fail(key string, err error) {
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

// appendString appends s as a JSON string, escaped as encoding/json
// escapes it with HTML escaping off.
func appendString(b []byte, s string) []byte {
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
