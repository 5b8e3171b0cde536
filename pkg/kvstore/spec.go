package kvstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// Spec is a schedule as its owner defined it: the value of key <id> in the
// sched_specs bucket. Exactly one of Cron, Every and At is set.
//
//	{"workflow":"billing","cron":"0 9 * * 1-5","tz":"Europe/Paris","input":{"region":"eu"}}
type Spec struct {
	// ID repeats the key. Optional in the record; when present it must
	// equal the key.
	ID string `json:"id,omitempty"`
	// Workflow is the token fires are published under: sched.fire.<workflow>.
	Workflow string `json:"workflow"`
	// Cron is a cron expression: 5 fields, or 6 with seconds first, or an
	// @alias such as @daily.
	Cron string `json:"cron,omitempty"`
	// Every is a fixed interval such as "5s", "90m" or "1d". Slots fall on
	// Anchor + k*Every.
	Every string `json:"every,omitempty"`
	// Anchor aligns Every; the default is the Unix epoch, so "every 5s"
	// fires at :00, :05, ... and "every 1d" at 00:00 UTC.
	Anchor *time.Time `json:"anchor,omitempty"`
	// At is a one-shot fire time (RFC 3339).
	At *time.Time `json:"at,omitempty"`
	// TZ is the IANA zone the cron expression is read in, and the offset of
	// the Sched-Scheduled-At header. Default UTC.
	TZ string `json:"tz,omitempty"`
	// Input is the fire message body, passed through unchanged. Any JSON.
	Input json.RawMessage `json:"input,omitempty"`
	// Description is free text for operators.
	Description string `json:"description,omitempty"`
}

// DecodeSpec parses a sched_specs value strictly: unknown fields and
// trailing data are errors, so a typo in a hand-written record is reported
// instead of silently ignored.
func DecodeSpec(data []byte) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, &FieldError{Field: "spec", Reason: "not a valid spec JSON object", Err: err}
	}
	if dec.More() {
		return Spec{}, fieldErr("spec", "", "trailing data after the JSON object")
	}
	return s, nil
}

// Encode returns the record's JSON.
func (s Spec) Encode() ([]byte, error) { return json.Marshal(s) }

// Validate checks the spec for the given key and returns a *FieldError
// naming the first bad field.
func (s Spec) Validate(key string) error {
	if err := ValidateID(key); err != nil {
		return err
	}
	if s.ID != "" && s.ID != key {
		return fieldErr("id", s.ID, fmt.Sprintf("does not match the key %q", key))
	}
	if err := ValidateWorkflow(s.Workflow); err != nil {
		return err
	}
	if len(s.Input) > 0 && !json.Valid(s.Input) {
		return fieldErr("input", "", "not valid JSON")
	}
	_, err := s.Recurrence()
	return err
}

// Recurrence parses the spec's recurrence. Errors are *FieldError naming
// "cron", "every", "at", "anchor" or "tz".
func (s Spec) Recurrence() (cronx.Schedule, error) {
	set := 0
	for _, v := range []bool{s.Cron != "", s.Every != "", s.At != nil} {
		if v {
			set++
		}
	}
	if set != 1 {
		return nil, fieldErr("cron", "", "exactly one of cron, every and at must be set")
	}
	loc, err := cronx.LoadZone(s.TZ)
	if err != nil {
		return nil, wrapParse("tz", s.TZ, err)
	}
	switch {
	case s.Cron != "":
		c, err := cronx.ParseCron(s.Cron, loc)
		if err != nil {
			return nil, wrapParse("cron", s.Cron, err)
		}
		return c, nil
	case s.Every != "":
		d, err := cronx.ParseEvery(s.Every)
		if err != nil {
			return nil, wrapParse("every", s.Every, err)
		}
		iv := cronx.Interval{Every: d}
		if s.Anchor != nil {
			iv.Anchor = *s.Anchor
		}
		return iv, nil
	default:
		return cronx.Once{At: *s.At}, nil
	}
}

// Location is the spec's zone (UTC when unset or invalid).
func (s Spec) Location() *time.Location {
	loc, err := cronx.LoadZone(s.TZ)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Plan is a canonical fingerprint of the recurrence (kind, expression,
// zone, anchor). The scheduler keeps a schedule's cadence across spec
// updates whose Plan is unchanged, and re-plans from now when it changes.
func (s Spec) Plan() string {
	switch {
	case s.Cron != "":
		return "cron " + s.Cron + " tz=" + s.TZ
	case s.Every != "":
		p := "every " + s.Every
		if s.Anchor != nil {
			p += " anchor=" + s.Anchor.UTC().Format(time.RFC3339Nano)
		}
		return p
	case s.At != nil:
		return "at " + s.At.UTC().Format(time.RFC3339Nano)
	}
	return ""
}

// RecurrenceString is the recurrence as a person reads it, e.g.
// "cron 0 9 * * 1-5 (Europe/Paris)" or "every 5s".
func (s Spec) RecurrenceString() string {
	switch {
	case s.Cron != "":
		if s.TZ != "" {
			return "cron " + s.Cron + " (" + s.TZ + ")"
		}
		return "cron " + s.Cron
	case s.Every != "":
		return "every " + s.Every
	case s.At != nil:
		return "at " + s.At.Format(time.RFC3339)
	}
	return ""
}

func wrapParse(field, value string, err error) error {
	var pe *cronx.ParseError
	if errors.As(err, &pe) {
		return &FieldError{Field: field, Value: value, Err: err}
	}
	return &FieldError{Field: field, Value: value, Reason: err.Error()}
}
