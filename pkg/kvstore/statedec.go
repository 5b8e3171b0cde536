package kvstore

import (
	"math"
	"time"
	"unicode/utf8"
)

// This file decodes, without reflection, the form of a state record that
// State.AppendJSON writes for the records most schedules have (a next
// slot, a plan, counters, a claim without a trace): what a scheduler reads
// for every schedule at a start. Anything else (pauses, triggers,
// backfills, running fires, traces, escapes in a string, null, whitespace,
// a key twice, an unknown key, a number encoding/json would read another
// way) is left to encoding/json: decodeStateFast only ever accepts what
// json.Unmarshal reads to the same value (FuzzStateDecodeFast checks it).

// decodeStateFast decodes data if it is in the common form; ok false
// otherwise (the caller decodes it with encoding/json).
func decodeStateFast(data []byte) (s State, ok bool) {
	d := fastDecoder{b: data}
	ok = d.object(func(key []byte) (uint32, bool) {
		switch string(key) { // no allocation
		case "next":
			return 1 << 0, d.time(&s.Next)
		case "next_nominal":
			return 1 << 1, d.time(&s.NextNominal)
		case "next_reason":
			return 1 << 2, d.str(&s.NextReason)
		case "plan":
			return 1 << 3, d.str(&s.Plan)
		case "claim":
			s.Claim = new(Claim)
			return 1 << 4, d.claim(s.Claim)
		case "fires":
			return 1 << 5, d.uint(&s.Fires)
		case "missed":
			return 1 << 6, d.uint(&s.Missed)
		case "missed_at_least":
			return 1 << 7, d.bool(&s.MissedAtLeast)
		case "skipped":
			return 1 << 8, d.uint(&s.Skipped)
		case "ended":
			return 1 << 9, d.bool(&s.Ended)
		case "updated_at":
			return 1 << 10, d.time(&s.UpdatedAt)
		case "resumed_at":
			return 1 << 11, d.time(&s.ResumedAt)
		case "skip_next":
			return 1 << 12, d.int(&s.SkipNext)
		case "last_done":
			return 1 << 13, d.time(&s.LastDone)
		case "owner":
			return 1 << 14, d.str(&s.Owner)
		}
		return 0, false
	})
	if !ok || d.i != len(d.b) {
		return State{}, false
	}
	return s, true
}

// fastDecoder reads the restricted JSON decodeStateFast accepts.
type fastDecoder struct {
	b []byte
	i int
}

// open reads '{'.
func (d *fastDecoder) open() bool {
	if d.i < len(d.b) && d.b[d.i] == '{' {
		d.i++
		return true
	}
	return false
}

// closing reads '}' if it comes next (an empty object).
func (d *fastDecoder) closing() bool {
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return true
	}
	return false
}

// next reads ',' (more: true) or '}' (more: false) after a value.
func (d *fastDecoder) next() (more, ok bool) {
	if d.i >= len(d.b) {
		return false, false
	}
	c := d.b[d.i]
	d.i++
	switch c {
	case ',':
		return true, true
	case '}':
		return false, true
	}
	return false, false
}

// key reads `"name":` where name is lower-case letters and underscores,
// and returns name's bytes (in b: switched on, never kept).
func (d *fastDecoder) key() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	j := start
	for j < len(d.b) && (d.b[j] >= 'a' && d.b[j] <= 'z' || d.b[j] == '_') {
		j++
	}
	if j+1 >= len(d.b) || d.b[j] != '"' || d.b[j+1] != ':' {
		return nil, false
	}
	d.i = j + 2
	return d.b[start:j], true
}

// raw reads a string without escapes or control characters, in valid
// UTF-8, and returns its bytes.
func (d *fastDecoder) raw() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	j := start
	ascii := true
	for ; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			break
		}
		if c == '\\' || c < 0x20 {
			return nil, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if j >= len(d.b) {
		return nil, false
	}
	v := d.b[start:j]
	if !ascii && !utf8.Valid(v) {
		return nil, false // encoding/json would replace the bad bytes
	}
	d.i = j + 1
	return v, true
}

func (d *fastDecoder) str(dst *string) bool {
	v, ok := d.raw()
	if ok {
		*dst = string(v)
	}
	return ok
}

// time reads a string as time.Time.UnmarshalJSON does (RFC 3339, strict).
func (d *fastDecoder) time(dst *time.Time) bool {
	v, ok := d.raw()
	return ok && dst.UnmarshalText(v) == nil
}

// digits reads [0-9]+ without a leading zero (as JSON has it), up to 19
// digits (so that it fits an int64 or uint64 before the range check).
func (d *fastDecoder) digits() (uint64, bool) {
	start := d.i
	var n uint64
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		n = n*10 + uint64(d.b[d.i]-'0')
		d.i++
	}
	l := d.i - start
	if l == 0 || l > 19 || l > 1 && d.b[start] == '0' {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false // a fraction or exponent: encoding/json's to judge
	}
	return n, true
}

func (d *fastDecoder) uint(dst *uint64) bool {
	n, ok := d.digits()
	if ok {
		*dst = n
	}
	return ok
}

func (d *fastDecoder) int(dst *int) bool {
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	n, ok := d.digits()
	if !ok || n > math.MaxInt32 { // within int on every platform
		return false
	}
	v := int(n)
	if neg {
		v = -v
	}
	*dst = v
	return true
}

func (d *fastDecoder) bool(dst *bool) bool {
	switch {
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		*dst, d.i = true, d.i+4
		return true
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		*dst, d.i = false, d.i+5
		return true
	}
	return false
}

// claim reads a claim object without a trace.
func (d *fastDecoder) claim(c *Claim) bool {
	return d.object(func(key []byte) (uint32, bool) {
		switch string(key) {
		case "slot":
			return 1 << 0, d.time(&c.Slot)
		case "token":
			return 1 << 1, d.str(&c.Token)
		case "owner":
			return 1 << 2, d.str(&c.Owner)
		case "at":
			return 1 << 3, d.time(&c.At)
		case "expires":
			return 1 << 4, d.time(&c.Expires)
		case "reason":
			return 1 << 5, d.str(&c.Reason)
		case "note":
			return 1 << 6, d.str(&c.Note)
		case "nominal":
			return 1 << 7, d.time(&c.Nominal)
		case "slot_id":
			return 1 << 8, d.str(&c.SlotID)
		case "cancel":
			return 1 << 9, d.str(&c.Cancel)
		case "seq":
			return 1 << 10, d.uint(&c.Seq)
		case "window":
			return 1 << 11, d.str(&c.Window)
		}
		return 0, false
	})
}

// object reads an object whose keys field reads: for each key, field
// reads its value and returns the key's bit (0: a key not taken) and
// whether the value was in the form. A key twice declines the object.
func (d *fastDecoder) object(field func(key []byte) (bit uint32, ok bool)) bool {
	if !d.open() {
		return false
	}
	var seen uint32
	for more := !d.closing(); more; {
		key, ok := d.key()
		if !ok {
			return false
		}
		bit, ok := field(key)
		if !ok || bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		if more, ok = d.next(); !ok {
			return false
		}
	}
	return true
}
