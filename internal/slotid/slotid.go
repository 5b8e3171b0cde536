// Package slotid names the slots a scheduler fires outside a schedule's
// recurrence: an operator's trigger and a backfill's replayed slot. Their
// ids are the fire's Nats-Msg-Id and the key of its ledger entry in
// sched_ticks, "<schedule id>.<kind>-<unix ms>" (docs/records.md); the ids
// of the recurrence's own slots are pkg/kvstore's SlotID and ParseSlotID.
package slotid

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Extra names a slot outside the recurrence: "<schedule id>.<kind>-<unix
// ms>", e.g. "report.trigger-1796112000000".
func Extra(id, kind string, at time.Time) string {
	return id + "." + kind + "-" + strconv.FormatInt(at.UnixMilli(), 10)
}

// ParseAny splits any slot id a scheduler writes: a slot of the
// recurrence, "<schedule id>.<unix ms>" (kind ""), or an extra slot,
// "<schedule id>.<kind>-<unix ms>" (kind "trigger" or "backfill", see
// Extra), whose milliseconds are its scheduled time too: a trigger's time,
// a backfill's replayed slot. Errors match kvstore.ErrInvalid.
func ParseAny(s string) (id, kind string, slot time.Time, err error) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 {
		return "", "", time.Time{}, fmt.Errorf("%w: slot id %q: want <id>.<unix ms> or <id>.<kind>-<unix ms>", kvstore.ErrInvalid, s)
	}
	last := s[i+1:]
	if k := strings.IndexByte(last, '-'); k > 0 {
		kind, last = last[:k], last[k+1:]
		if strings.TrimLeft(kind, "abcdefghijklmnopqrstuvwxyz") != "" {
			return "", "", time.Time{}, fmt.Errorf("%w: slot id %q: kind %q is not lower-case letters", kvstore.ErrInvalid, s, kind)
		}
	}
	ms, err := strconv.ParseInt(last, 10, 64)
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("%w: slot id %q: %w", kvstore.ErrInvalid, s, err)
	}
	return s[:i], kind, time.UnixMilli(ms).UTC(), nil
}

// TickWithSlotOf is t with the scheduled time its key names (see ParseAny)
// when it has none: schedulers before the fix of issue 51 wrote a worker's
// outcome on a trigger's or a backfill's slot with the zero time
// ("0001-01-01T00:00:00Z"), which readers must not show.
func TickWithSlotOf(t kvstore.Tick, key string) kvstore.Tick {
	if t.Slot.IsZero() {
		if _, _, slot, err := ParseAny(key); err == nil {
			t.Slot = slot
		}
	}
	return t
}
