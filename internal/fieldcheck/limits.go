package fieldcheck

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jetsched/jetsched/internal/strictjson"
	"github.com/jetsched/jetsched/internal/textcut"
)

// The caps the checks apply; pkg/kvstore documents and re-exports the
// sizes (kvstore.MaxInputBytes, MaxNoteBytes); the depth is stated in
// docs/records.md.
const (
	// MaxInputBytes caps a spec's input and a timer's payload.
	MaxInputBytes = 256 << 10
	// MaxNoteBytes caps free text (notes, descriptions, conditions).
	MaxNoteBytes = 1 << 10
	// MaxJSONDepth caps the nesting of objects and arrays in a spec's
	// input and a timer's payload: `{"a":[1]}` is 2 deep. 64 is the
	// default limit of .NET's System.Text.Json, the strictest of the
	// common decoders (serde_json stops at 128, Python and Jackson near
	// 1,000), so a worker in any language decodes what jetsched accepts.
	MaxJSONDepth = 64
	// MaxPolicyDuration bounds a spec's catchup_window, misfire_threshold
	// and completion_timeout, and the engine's durations of the same kind
	// (a misfire threshold, a lease TTL): added to a time in the supported
	// range, none of them overflows (issue 52).
	MaxPolicyDuration = 10 * 365 * 24 * time.Hour
)

// JSON checks a JSON value passed through to workers (a spec's input, a
// timer's payload): at most MaxInputBytes, nested at most MaxJSONDepth,
// and valid JSON. Empty is fine (no body). Errors are *FieldError naming
// field.
func JSON(field string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if err := Size(field, len(data), MaxInputBytes); err != nil {
		return err
	}
	if d := strictjson.Depth(data); d > MaxJSONDepth {
		return New(field, "", fmt.Sprintf("nested %d deep, over the maximum of %d (workers in other languages could not decode it)", d, MaxJSONDepth))
	}
	if !json.Valid(data) {
		return New(field, "", "not valid JSON")
	}
	return nil
}

// Text checks free text that becomes a message header or a log line (a
// timer's condition, its when form, zone and calendar): at most max
// bytes, valid UTF-8, and no control characters (CR and LF would end a
// header line). Errors are *FieldError naming field and the character.
func Text(field, s string, max int) error {
	if err := Size(field, len(s), max); err != nil {
		return err
	}
	if !utf8.ValidString(s) {
		return New(field, textcut.Cut(s, 32, "…"), "not valid UTF-8")
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return New(field, textcut.Cut(s, 32, "…"), fmt.Sprintf("control character %q at byte %d is not allowed", r, i))
		}
	}
	return nil
}

// Size returns a *FieldError naming field when value is longer than max
// bytes.
func Size(field string, size, max int) error {
	if size <= max {
		return nil
	}
	return New(field, "", fmt.Sprintf("%s is over the maximum of %s", ByteSize(size), ByteSize(max)))
}

// Note checks free text against MaxNoteBytes.
func Note(field, note string) error { return Size(field, len(note), MaxNoteBytes) }

// ByteSize renders a size for messages: "300 KiB", "1.5 MiB", "812 bytes".
func ByteSize(n int) string {
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
