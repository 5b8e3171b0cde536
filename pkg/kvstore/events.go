package kvstore

import (
	"fmt"
	"slices"
	"strings"
)

// SchedulerEvents are the event kinds a scheduler publishes (the fire and
// timer engines), the kinds an EventSet chooses from. Workers publish
// dead_letter, which no EventSet filters.
func SchedulerEvents() []EventKind {
	return []EventKind{EventInvalid, EventMissed, EventSkipped, EventMoved, EventFired, EventFailed, EventReplanned,
		EventStalled, EventLeaseGained, EventLeaseLost, EventLeaseIgnored, EventGuardClosed, EventGuardOpened, EventRecovered, EventWakeupExpired, EventStale,
		EventStreamFull, EventAccountLimit, EventUnacknowledged, EventUndeliverable}
}

// EventSet chooses the observer events a scheduler publishes, by kind. The
// nil set is the default: every kind but fired (the fire stream has every
// fire already).
type EventSet map[EventKind]bool

// Has reports whether events of kind are published.
func (s EventSet) Has(kind EventKind) bool {
	if s == nil {
		return kind != EventFired
	}
	return s[kind]
}

// String lists the set's kinds, comma-separated, in SchedulerEvents order.
func (s EventSet) String() string {
	var out []string
	for _, k := range SchedulerEvents() {
		if s.Has(k) {
			out = append(out, string(k))
		}
	}
	return strings.Join(out, ",")
}

// ParseEventSet reads a comma-separated list of event kinds, as
// `scheduler run --events` takes it: kinds of SchedulerEvents, "default"
// (every kind but fired), "all" or "none", e.g. "default,fired" or
// "fired,missed". An unknown word is a *FieldError on field events naming
// it.
func ParseEventSet(list string) (EventSet, error) {
	set := EventSet{}
	for word := range strings.SplitSeq(list, ",") {
		word = strings.TrimSpace(word)
		switch word {
		case "none", "":
		case "default", "all":
			for _, k := range SchedulerEvents() {
				if word == "all" || k != EventFired {
					set[k] = true
				}
			}
		default:
			if !slices.Contains(SchedulerEvents(), EventKind(word)) {
				return nil, fieldErr("events", word, fmt.Sprintf("not an event kind; want default, all, none or kinds of %s", EventSet(nil).all()))
			}
			set[EventKind(word)] = true
		}
	}
	return set, nil
}

// all lists every kind a set may hold.
func (EventSet) all() string {
	var out []string
	for _, k := range SchedulerEvents() {
		out = append(out, string(k))
	}
	return strings.Join(out, ", ")
}
