package kvstore

import (
	"fmt"

	"github.com/jetsched/jetsched/internal/jsonenc"
)

// This file encodes the state record, written on every fire, without
// reflection (with internal/jsonenc, which the window record's encoder
// shares). The output is what encoding/json
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

// appendJSON appends the record's JSON to b and returns the extended
// buffer. It fails, like json.Marshal, on a time whose year is outside
// [0, 9999] or whose zone offset is 24 hours or more, and on a backfill
// rate that is NaN or infinite, with an error that wraps ErrInvalid and
// names the field; b is returned unchanged then.
func (s State) appendJSON(b []byte) ([]byte, error) {
	e := jsonenc.Encoder{B: append(b, '{')}
	e.Time(`"next":`, s.Next, true)
	e.Time(`"next_nominal":`, s.NextNominal, true)
	e.Str(`"next_reason":`, s.NextReason, true)
	e.Str(`"plan":`, s.Plan, false)
	if c := s.Claim; c != nil {
		e.Open(`"claim":`, "claim.")
		e.Time(`"slot":`, c.Slot, false)
		e.Str(`"token":`, c.Token, false)
		e.Str(`"owner":`, c.Owner, false)
		e.Time(`"at":`, c.At, false)
		e.Time(`"expires":`, c.Expires, false)
		e.Str(`"reason":`, c.Reason, true)
		e.Str(`"note":`, c.Note, true)
		e.Time(`"nominal":`, c.Nominal, true)
		e.Str(`"slot_id":`, c.SlotID, true)
		e.Str(`"cancel":`, c.Cancel, true)
		e.Uint(`"seq":`, c.Seq, true)
		e.Str(`"window":`, c.Window, true)
		appendTrace(&e, `"trace":`, c.Trace)
		e.Close()
	}
	e.Uint(`"fires":`, s.Fires, false)
	e.Uint(`"missed":`, s.Missed, true)
	e.Flag(`"missed_at_least":`, s.MissedAtLeast)
	e.Uint(`"skipped":`, s.Skipped, true)
	e.Flag(`"ended":`, s.Ended)
	e.Time(`"updated_at":`, s.UpdatedAt, true)
	if p := s.Paused; p != nil {
		e.Open(`"paused":`, "paused.")
		e.Str(`"note":`, p.Note, true)
		e.Time(`"at":`, p.At, false)
		e.Time(`"until":`, p.Until, true)
		e.Close()
	}
	e.Time(`"resumed_at":`, s.ResumedAt, true)
	e.Int(`"skip_next":`, int64(s.SkipNext), true)
	if len(s.Triggers) > 0 {
		e.Key(`"triggers":`)
		e.B = append(e.B, '[')
		for i := range s.Triggers {
			t := &s.Triggers[i]
			e.Element("triggers[].")
			e.Time(`"at":`, t.At, false)
			e.Str(`"note":`, t.Note, true)
			appendTrace(&e, `"trace":`, t.Trace)
			e.Close()
		}
		e.B = append(e.B, ']')
	}
	if f := s.Backfill; f != nil {
		e.Open(`"backfill":`, "backfill.")
		e.Time(`"from":`, f.From, false)
		e.Time(`"to":`, f.To, false)
		e.Time(`"cursor":`, f.Cursor, true)
		e.Float(`"rate":`, f.Rate)
		e.Time(`"not_before":`, f.NotBefore, true)
		e.Str(`"note":`, f.Note, true)
		e.Int(`"total":`, int64(f.Total), true)
		e.Int(`"done":`, int64(f.Done), true)
		e.Close()
	}
	if r := s.Running; r != nil {
		e.Open(`"running":`, "running.")
		e.Str(`"slot_id":`, r.SlotID, false)
		e.Time(`"slot":`, r.Slot, false)
		e.Time(`"since":`, r.Since, false)
		e.Time(`"deadline":`, r.Deadline, false)
		e.Close()
	}
	e.Time(`"last_done":`, s.LastDone, true)
	e.Str(`"owner":`, s.Owner, true)
	e.Close()
	return result(&e, b, "state record")
}

// MarshalJSON implements json.Marshaler with appendJSON, so that a State
// in an API answer is encoded without reflection too. encoding/json
// re-escapes its output as it escapes everything else (HTML-safe by
// default), so such answers are the same bytes as before.
func (s State) MarshalJSON() ([]byte, error) { return s.Encode() }

// appendTrace writes an omitempty trace context: {"traceparent":...,
// "tracestate":...}, or nothing when t is nil. It stays inside the object
// being written for errors (it cannot fail).
func appendTrace(e *jsonenc.Encoder, key string, t *TraceContext) {
	if t == nil {
		return
	}
	e.Key(key)
	e.B = append(e.B, `{"traceparent":`...)
	e.B = jsonenc.AppendString(e.B, t.TraceParent)
	if t.TraceState != "" {
		e.B = append(e.B, `,"tracestate":`...)
		e.B = jsonenc.AppendString(e.B, t.TraceState)
	}
	e.B = append(e.B, '}')
}

// result is e's record, or b unchanged and an error that wraps ErrInvalid
// and names the record and the field.
func result(e *jsonenc.Encoder, b []byte, record string) ([]byte, error) {
	out, err := e.Result(b)
	if err != nil {
		return b, fmt.Errorf("%w: %s: %w", ErrInvalid, record, err)
	}
	return out, nil
}
