package kvstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/strictjson"
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
	// DomDow combines the cron's day-of-month and day-of-week: "cronie"
	// (default: as Linux cron, a field starting with '*' is unrestricted
	// and both restricted fields OR), "posix" (only a bare '*' or '?' is
	// unrestricted, as robfig/cron and croniter) or "and" (a day must
	// match both).
	DomDow string `json:"dom_dow,omitempty"`
	// DSTGap is what a cron occurrence in a DST gap does: "natural"
	// (default), "skip" or "shift".
	DSTGap string `json:"dst_gap,omitempty"`
	// DSTOverlap is what a cron occurrence in a DST overlap does:
	// "natural" (default), "once" or "twice".
	DSTOverlap string `json:"dst_overlap,omitempty"`
	// Every is a fixed interval in the duration grammar of docs/cron.md:
	// "5s", "90m", "2 hours", "1 day 3 hours", "7d", "3600000" (ms).
	Every string `json:"every,omitempty"`
	// Align says what Every counts from (docs/cron.md, "Intervals and
	// anchors"):
	//
	//   - "anchor": from Anchor, which the store fills in with the time of
	//     the first write when it is missing (registration); re-registering
	//     the same interval keeps it;
	//   - "epoch": from the Unix epoch plus Phase (Temporal's reading);
	//   - "" (specs written before align existed): from Anchor, else the
	//     Unix epoch, in elapsed time. A spec written without align and
	//     without anchor is given align "anchor" at its first write.
	//
	// With "anchor" and "epoch", an Every of whole days follows the wall
	// clock of TZ: "every 7d" fires on the anchor's weekday at the anchor's
	// time of day, across DST changes.
	Align string `json:"align,omitempty"`
	// Anchor is the instant Every counts from (align "anchor" or "").
	Anchor *time.Time `json:"anchor,omitempty"`
	// Phase shifts the epoch of align "epoch" ("15m": slots at :15, :45
	// for every 30m; "9h" with every 1d: 09:00 in TZ each day).
	Phase string `json:"phase,omitempty"`
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
	// Calendar names a business calendar in sched_calendars; CalendarInline
	// carries one in the spec instead (docs/calendar.md). At most one.
	Calendar       string          `json:"calendar,omitempty"`
	CalendarInline json.RawMessage `json:"calendar_inline,omitempty"`
	// HolidayRoll is what an occurrence on a holiday does: "skip"
	// (default), "next_business_day", "previous_business_day",
	// "modified_following", "modified_preceding".
	HolidayRoll string `json:"holiday_roll,omitempty"`
	// BusinessHoursOnly moves an occurrence outside working hours to the
	// next working start (without a calendar: Mon-Fri 09:00-18:00 in TZ).
	BusinessHoursOnly bool `json:"business_hours_only,omitempty"`
	// BusinessDay is a recurrence: the n-th business day of each month
	// (-1 the last), at Time ("HH:MM[:SS]", default 00:00) in the
	// calendar's zone.
	BusinessDay int    `json:"business_day,omitempty"`
	Time        string `json:"time,omitempty"`
	// Misfire is what happens to slots later than MisfireThreshold:
	// "skip" (default: record them missed, fire at the next slot),
	// "fire_once" (one catch-up fire now), "fire_all" (every missed slot,
	// in order). Only slots within CatchupWindow (default 24h) are caught
	// up; older ones are recorded missed.
	Misfire          MisfirePolicy `json:"misfire,omitempty"`
	CatchupWindow    string        `json:"catchup_window,omitempty"`
	MisfireThreshold string        `json:"misfire_threshold,omitempty"`
	// Overlap is what happens when a slot comes due while the previous
	// fire has not reported completion: "allow" (default), "skip",
	// "buffer_one", "buffer_all", "cancel_other". CompletionTimeout
	// (default 1h) frees the slot when no report comes.
	Overlap           OverlapPolicy `json:"overlap,omitempty"`
	CompletionTimeout string        `json:"completion_timeout,omitempty"`
	// Jitter spreads the fires: each regular slot is published up to
	// Jitter (a duration, 1ms to 24h) after its time, by an offset fixed
	// by its slot id, so every instance and every retry picks the same
	// instant (Sched-Jitter says which). The slots, the ledger and the
	// misfire threshold (which counts from the latest instant a slot may
	// be due) are as without it; triggers and backfills are not delayed.
	Jitter string `json:"jitter,omitempty"`
	// Description is free text for operators.
	Description string `json:"description,omitempty"`
	// Labels are key=value pairs operators select schedules by
	// (`scheduler schedule ls --selector team=billing`): at most
	// MaxLabels, keys of letters, digits, '-', '_', '.' and '/', values of
	// letters, digits, '-', '_' and '.' (docs/records.md). Like the
	// description they are not part of the schedule's content hash
	// (DefaultKey) nor of its plan: changing them updates the schedule in
	// place and keeps its cadence.
	Labels map[string]string `json:"labels,omitempty"`
	// Static marks a schedule declared in a file of `scheduler run
	// --schedules` or by client.Static, and names that source (the file's
	// base name, or the label the code gave). Only its source creates,
	// updates and removes it: the admin API, the CLI and client.Schedule
	// refuse to (ErrStatic, API code static), while pause, resume,
	// trigger, skip and backfill work as on any schedule.
	Static string `json:"static,omitempty"`
	// Trace is the trace context of the span that wrote the spec's current
	// content (the admin API's schedule.create or schedule.update span, or
	// the span in the context of client.Schedule): every dispatch span of
	// the schedule links to it. The store fills it in from the writer's
	// context when a write changes the spec and the spec has none; it is
	// no part of the schedule's identity (DefaultKey, nor the store's "same
	// spec" check), so that
	// registering the same schedule again writes nothing. Optional.
	Trace *TraceContext `json:"trace,omitempty"`
}

// DecodeSpec parses a sched_specs value strictly: unknown fields, keys
// given twice and trailing data are errors, so a typo in a hand-written
// record is reported instead of silently ignored.
func DecodeSpec(data []byte) (Spec, error) {
	if s, ok := decodeSpecFast(data); ok {
		return s, nil
	}
	return decodeSpecStrict(data)
}

// decodeSpecStrict is DecodeSpec by encoding/json, for any form.
func decodeSpecStrict(data []byte) (Spec, error) {
	if err := strictjson.Check(data); err != nil {
		return Spec{}, duplicateKey(err, "spec")
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Spec{}, &FieldError{Field: te.Field, Reason: "want a JSON " + te.Type.Kind().String() + ", not " + te.Value}
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return Spec{}, &FieldError{Field: strings.Trim(name, `"`), Reason: "unknown field (docs/records.md lists a spec's fields)"}
		}
		return Spec{}, &FieldError{Field: "spec", Reason: "not a valid spec JSON object", Err: err}
	}
	if dec.More() {
		return Spec{}, fieldcheck.New("spec", "", "trailing data after the JSON object")
	}
	return s, nil
}

// Encode returns the record's JSON.
func (s Spec) Encode() ([]byte, error) { return json.Marshal(s) }
