package kvstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	// Cron is a cron expression: 5 fields, 6 with seconds first, 7 with a
	// year, an @alias such as @daily, or "@every <duration>"; see
	// docs/cron.md. A "CRON_TZ=Zone " prefix sets the zone.
	Cron string `json:"cron,omitempty"`
	// Dialect reads the cron's day-of-week field: "standard" (default) or
	// "quartz" (1=SUN ... 7=SAT, '?' in exactly one day field).
	Dialect string `json:"dialect,omitempty"`
	// DSTGap is what a cron occurrence in a DST gap does: "natural"
	// (default), "skip" or "shift".
	DSTGap string `json:"dst_gap,omitempty"`
	// DSTOverlap is what a cron occurrence in a DST overlap does:
	// "natural" (default), "once" or "twice".
	DSTOverlap string `json:"dst_overlap,omitempty"`
	// Every is a fixed interval such as "5s", "90m" or "1d". Slots fall on
	// Anchor + k*Every.
	Every string `json:"every,omitempty"`
	// Anchor aligns Every; the default is the Unix epoch, so "every 5s"
	// fires at :00, :05, ... and "every 1d" at 00:00 UTC.
	Anchor *time.Time `json:"anchor,omitempty"`
	// At is a one-shot fire time (RFC 3339).
	At *time.Time `json:"at,omitempty"`
	// Start and End bound the fire times to [Start, End]; Limit caps the
	// number of fire times counted from Start (which it requires).
	Start *time.Time `json:"start,omitempty"`
	End   *time.Time `json:"end,omitempty"`
	Limit int        `json:"limit,omitempty"`
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
	_, err := s.Recurrence(key)
	return err
}

// cronOptions reads the cron options; errors name their field.
func (s Spec) cronOptions(id string, loc *time.Location) (cronx.Options, error) {
	o := cronx.Options{Location: loc, Key: id}
	var err error
	if o.Dialect, err = cronx.ParseDialect(s.Dialect); err != nil {
		return o, wrapParse("dialect", s.Dialect, err)
	}
	if o.Gap, err = cronx.ParseGapPolicy(s.DSTGap); err != nil {
		return o, wrapParse("dst_gap", s.DSTGap, err)
	}
	if o.Overlap, err = cronx.ParseOverlapPolicy(s.DSTOverlap); err != nil {
		return o, wrapParse("dst_overlap", s.DSTOverlap, err)
	}
	if s.Cron == "" && (s.Dialect != "" || s.DSTGap != "" || s.DSTOverlap != "") {
		return o, fieldErr("dialect", "", "dialect, dst_gap and dst_overlap apply to cron only")
	}
	return o, nil
}

// Recurrence parses the spec's recurrence for schedule id (which seeds H
// fields). Errors are *FieldError naming "cron", "every", "at", "anchor",
// "tz", "dialect", "dst_gap" or "dst_overlap".
func (s Spec) Recurrence(id string) (cronx.Schedule, error) {
	sched, err := s.recurrence(id)
	if err != nil || s.Start == nil && s.End == nil && s.Limit == 0 {
		return sched, err
	}
	var start, end time.Time
	if s.Start != nil {
		start = *s.Start
	}
	if s.End != nil {
		end = *s.End
	}
	b, err := cronx.NewBounded(sched, start, end, s.Limit)
	if err != nil {
		var pe *cronx.ParseError
		field := "limit"
		if errors.As(err, &pe) && pe.Field == "end" {
			field = "end"
		}
		return nil, wrapParse(field, "", err)
	}
	return b, nil
}

func (s Spec) recurrence(id string) (cronx.Schedule, error) {
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
	opts, err := s.cronOptions(id, loc)
	if err != nil {
		return nil, err
	}
	switch {
	case s.Cron != "":
		c, err := cronx.Parse(s.Cron, opts)
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

// Location is the spec's zone: a CRON_TZ=/TZ= prefix of the cron
// expression, else TZ; UTC when unset or invalid.
func (s Spec) Location() *time.Location {
	name := s.TZ
	if first, _, _ := strings.Cut(strings.TrimSpace(s.Cron), " "); strings.HasPrefix(first, "CRON_TZ=") || strings.HasPrefix(first, "TZ=") {
		_, name, _ = strings.Cut(first, "=")
	}
	loc, err := cronx.LoadZone(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// Plan is a canonical fingerprint of the recurrence (kind, expression,
// zone, anchor). The scheduler keeps a schedule's cadence across spec
// updates whose Plan is unchanged, and re-plans from now when it changes.
func (s Spec) Plan() string {
	p := s.plan()
	if s.Start != nil || s.End != nil || s.Limit != 0 {
		p += fmt.Sprintf(" start=%v end=%v limit=%d", timeOrNil(s.Start), timeOrNil(s.End), s.Limit)
	}
	return p
}

func timeOrNil(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (s Spec) plan() string {
	switch {
	case s.Cron != "":
		p := "cron " + s.Cron + " tz=" + s.TZ
		if s.Dialect != "" || s.DSTGap != "" || s.DSTOverlap != "" {
			p += " dialect=" + s.Dialect + " gap=" + s.DSTGap + " overlap=" + s.DSTOverlap
		}
		return p
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
