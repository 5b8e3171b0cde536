package kvstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/jetsched/jetsched/internal/textcut"

	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/pkg/calendar"
)

// Caps on what users write. They keep every record, fire message and
// admin API reply well under NATS's default 1 MiB max payload, and every
// value that becomes a message header (notes, conditions) well under
// JetStream's 64 KiB header limit. They are checked at the edge (the CLI
// and the admin API refuse an oversized value before anything is
// written, naming the field) and again when a record is read, so a value
// written straight into a bucket above a cap is reported invalid.
const (
	// MaxInputBytes caps a spec's input and a timer's payload: the body of
	// the fire or wakeup message.
	MaxInputBytes = 256 << 10
	// MaxNoteBytes caps free text: pause, trigger and backfill notes
	// (trigger and backfill notes travel as the Sched-Note header), a
	// spec's description, a timer's condition, a calendar holiday's name.
	MaxNoteBytes = 1 << 10
	// MaxCalendarBytes caps a calendar's JSON form, stored or inline in a
	// spec.
	MaxCalendarBytes = calendar.MaxJSONBytes
	// MaxFieldBytes caps every other text field of a spec (cron, tz,
	// durations, ...).
	MaxFieldBytes = 1 << 10
	// MaxJSONDepth caps the nesting of objects and arrays in a spec's
	// input and a timer's payload: `{"a":[1]}` is 2 deep. 64 is the
	// default limit of .NET's System.Text.Json, the strictest of the
	// common decoders (serde_json stops at 128, Python and Jackson near
	// 1,000), so a worker in any language decodes what jetsched accepts.
	MaxJSONDepth = 64
)

// CheckJSON checks a JSON value passed through to workers (a spec's
// input, a timer's payload): at most MaxInputBytes, nested at most
// MaxJSONDepth, and valid JSON. Empty is fine (no body). Errors are
// *FieldError naming field.
func CheckJSON(field string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if err := CheckSize(field, len(data), MaxInputBytes); err != nil {
		return err
	}
	if d := strictjson.Depth(data); d > MaxJSONDepth {
		return fieldErr(field, "", fmt.Sprintf("nested %d deep, over the maximum of %d (workers in other languages could not decode it)", d, MaxJSONDepth))
	}
	if !json.Valid(data) {
		return fieldErr(field, "", "not valid JSON")
	}
	return nil
}

// CheckText checks free text that becomes a message header or a log
// line (a timer's condition, its when form, zone and calendar): at most
// max bytes, valid UTF-8, and no control characters (CR and LF would end
// a header line). Errors are *FieldError naming field and the character.
func CheckText(field, s string, max int) error {
	if err := CheckSize(field, len(s), max); err != nil {
		return err
	}
	if !utf8.ValidString(s) {
		return fieldErr(field, textcut.Cut(s, 32, "…"), "not valid UTF-8")
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return fieldErr(field, textcut.Cut(s, 32, "…"), fmt.Sprintf("control character %q at byte %d is not allowed", r, i))
		}
	}
	return nil
}

// CheckSize returns a *FieldError naming field when value is longer than
// max bytes.
func CheckSize(field string, size, max int) error {
	if size <= max {
		return nil
	}
	return fieldErr(field, "", fmt.Sprintf("%s is over the maximum of %s", byteSize(size), byteSize(max)))
}

// CheckNote checks free text against MaxNoteBytes.
func CheckNote(field, note string) error { return CheckSize(field, len(note), MaxNoteBytes) }

// checkSpecLimits checks a spec's sizes against the caps.
func checkSpecLimits(s Spec) error {
	if err := CheckSize("input", len(s.Input), MaxInputBytes); err != nil {
		return err
	}
	if err := CheckSize("calendar_inline", len(s.CalendarInline), MaxCalendarBytes); err != nil {
		return err
	}
	if err := CheckNote("description", s.Description); err != nil {
		return err
	}
	for _, f := range []struct{ name, value string }{
		{"cron", s.Cron}, {"every", s.Every}, {"tz", s.TZ}, {"dialect", s.Dialect}, {"dom_dow", s.DomDow}, {"dst_gap", s.DSTGap},
		{"dst_overlap", s.DSTOverlap}, {"calendar", s.Calendar}, {"holiday_roll", s.HolidayRoll}, {"time", s.Time},
		{"misfire", string(s.Misfire)}, {"catchup_window", s.CatchupWindow}, {"misfire_threshold", s.MisfireThreshold},
		{"overlap", string(s.Overlap)}, {"completion_timeout", s.CompletionTimeout},
	} {
		if err := CheckSize(f.name, len(f.value), MaxFieldBytes); err != nil {
			return err
		}
	}
	return nil
}

// byteSize renders a size for messages: "300 KiB", "1.5 MiB", "812 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// duplicateKey turns a *strictjson.DuplicateKeyError into a *FieldError
// naming the top-level field that holds the repeated key (record when
// there is none).
func duplicateKey(err error, record string) error {
	var dup *strictjson.DuplicateKeyError
	if !errors.As(err, &dup) {
		return err
	}
	field := dup.Field()
	if field == "" {
		field = record
	}
	return &FieldError{Field: field, Err: dup}
}
