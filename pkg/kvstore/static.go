package kvstore

import (
	"fmt"
	"unicode"
)

// StaticSchedule is one schedule of a StaticSet.
type StaticSchedule struct {
	// ID is the schedule's id; "" derives it from the spec (DefaultKey).
	ID   string
	Spec Spec
}

// StaticResult says what ApplyStatic did, by schedule id.
type StaticResult struct {
	Created, Updated, Unchanged, Removed []string
}

// ValidateSource checks a static source label: 1 to MaxIDLen bytes of
// printable characters.
func ValidateSource(label string) error {
	if label == "" {
		return fieldErr("static", "", "must not be empty")
	}
	if len(label) > MaxIDLen {
		return fieldErr("static", label[:16]+"…", fmt.Sprintf("longer than %d bytes", MaxIDLen))
	}
	for _, r := range label {
		if !unicode.IsPrint(r) {
			return fieldErr("static", label, fmt.Sprintf("character %q is not printable", r))
		}
	}
	return nil
}
