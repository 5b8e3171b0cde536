package kvstore

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"
)

// MaxIDLen bounds schedule ids and workflow names, so that keys and subjects
// stay well inside NATS limits.
const MaxIDLen = 128

// ValidateID checks a schedule id. An id is a KV key and a subject token:
// letters, digits, '-', '_' and '=' only (no '.', which would split the id
// into several subject tokens, and no wildcards or spaces).
func ValidateID(id string) error {
	return validateToken("id", id)
}

// ValidateWorkflow checks a workflow name, which becomes the last token of
// "sched.fire.<workflow>"; the rules are those of ValidateID.
func ValidateWorkflow(wf string) error {
	return validateToken("workflow", wf)
}

func validateToken(field, s string) error {
	if s == "" {
		return fieldErr(field, "", "must not be empty")
	}
	if len(s) > MaxIDLen {
		return fieldErr(field, s[:16]+"…", fmt.Sprintf("longer than %d bytes", MaxIDLen))
	}
	for i, r := range s {
		if !tokenRune(r) {
			return fieldErr(field, s, fmt.Sprintf("character %q at byte %d is not allowed (use letters, digits, '-', '_', '=')", r, i))
		}
	}
	return nil
}

func tokenRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '='
}

// SlotID names one occurrence of a schedule: "<schedule id>.<unix ms of the
// scheduled time>". It is the fire message's Nats-Msg-Id and the key of the
// slot's ledger entry in sched_ticks.
func SlotID(id string, slot time.Time) string {
	return id + "." + strconv.FormatInt(slot.UnixMilli(), 10)
}

// ExtraSlotID names a slot outside the recurrence: "<schedule
// id>.<kind>-<unix ms>", e.g. "report.trigger-1796112000000".
func ExtraSlotID(id, kind string, at time.Time) string {
	return id + "." + kind + "-" + strconv.FormatInt(at.UnixMilli(), 10)
}

// ParseSlotID splits a slot id of the recurrence, "<schedule id>.<unix
// ms>", into schedule id and scheduled time. An extra slot's id (see
// ExtraSlotID) is refused: ParseAnySlotID reads both.
func ParseSlotID(s string) (id string, slot time.Time, err error) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 {
		return "", time.Time{}, fmt.Errorf("%w: slot id %q: want <id>.<unix ms>", ErrInvalid, s)
	}
	ms, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%w: slot id %q: %v", ErrInvalid, s, err)
	}
	return s[:i], time.UnixMilli(ms).UTC(), nil
}

// ParseAnySlotID splits any slot id a scheduler writes: a slot of the
// recurrence, "<schedule id>.<unix ms>" (kind ""), or an extra slot,
// "<schedule id>.<kind>-<unix ms>" (kind "trigger" or "backfill", see
// ExtraSlotID), whose milliseconds are its scheduled time too: a
// trigger's time, a backfill's replayed slot.
func ParseAnySlotID(s string) (id, kind string, slot time.Time, err error) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 {
		return "", "", time.Time{}, fmt.Errorf("%w: slot id %q: want <id>.<unix ms> or <id>.<kind>-<unix ms>", ErrInvalid, s)
	}
	last := s[i+1:]
	if k := strings.IndexByte(last, '-'); k > 0 {
		kind, last = last[:k], last[k+1:]
		if strings.TrimLeft(kind, "abcdefghijklmnopqrstuvwxyz") != "" {
			return "", "", time.Time{}, fmt.Errorf("%w: slot id %q: kind %q is not lower-case letters", ErrInvalid, s, kind)
		}
	}
	ms, err := strconv.ParseInt(last, 10, 64)
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("%w: slot id %q: %w", ErrInvalid, s, err)
	}
	return s[:i], kind, time.UnixMilli(ms).UTC(), nil
}

// ShardOf maps a schedule id to its shard.
func ShardOf(id string, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(shards))
}

// ValidateCalendarName checks a calendar name (a KV key): the rules of
// ValidateID.
func ValidateCalendarName(name string) error {
	return validateToken("calendar", name)
}
