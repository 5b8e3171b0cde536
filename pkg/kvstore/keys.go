package kvstore

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/fieldcheck"
)

// MaxIDLen bounds schedule ids and workflow names, so that keys and subjects
// stay well inside NATS limits.
const MaxIDLen = fieldcheck.MaxIDLen

// ValidateID checks a schedule id. An id is a KV key and a subject token:
// letters, digits, '-', '_' and '=' only (no '.', which would split the id
// into several subject tokens, and no wildcards or spaces).
func ValidateID(id string) error {
	return fieldcheck.Token("id", id)
}

// ValidateWorkflow checks a workflow name, which becomes the last token of
// "sched.fire.<workflow>"; the rules are those of ValidateID.
func ValidateWorkflow(wf string) error {
	return fieldcheck.Token("workflow", wf)
}

// SlotID names one occurrence of a schedule: "<schedule id>.<unix ms of the
// scheduled time>". It is the fire message's Nats-Msg-Id and the key of the
// slot's ledger entry in sched_ticks.
func SlotID(id string, slot time.Time) string {
	return id + "." + strconv.FormatInt(slot.UnixMilli(), 10)
}

// ParseSlotID splits a slot id of the recurrence, "<schedule id>.<unix
// ms>", into schedule id and scheduled time. An extra slot's id (a
// trigger's or a backfill's, "<schedule id>.<kind>-<unix ms>") is refused.
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

// ShardOf maps a schedule id to its shard.
func ShardOf(id string, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(shards))
}
