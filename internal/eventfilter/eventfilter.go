// Package eventfilter chooses which observer events a scheduler publishes
// (`scheduler run --events`). The events themselves, their kinds and
// subjects are the public contract of pkg/kvstore (Event, EventKind,
// Layout.EventSubject); which of them a scheduler sends is its
// configuration, kept here, with the last token of an event's subject
// (SubjectID) that its publishers share.
package eventfilter

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// SchedulerEvents are the event kinds a scheduler publishes (the fire and
// timer engines), the kinds a Set chooses from. Workers publish
// dead_letter, which no Set filters.
func SchedulerEvents() []kvstore.EventKind {
	return []kvstore.EventKind{kvstore.EventInvalid, kvstore.EventMissed, kvstore.EventSkipped, kvstore.EventMoved,
		kvstore.EventFired, kvstore.EventFailed, kvstore.EventReplanned, kvstore.EventStalled, kvstore.EventLeaseGained,
		kvstore.EventLeaseLost, kvstore.EventLeaseIgnored, kvstore.EventGuardClosed, kvstore.EventGuardOpened,
		kvstore.EventRecovered, kvstore.EventWakeupExpired, kvstore.EventStale, kvstore.EventStreamFull,
		kvstore.EventAccountLimit, kvstore.EventUnacknowledged, kvstore.EventUndeliverable, kvstore.EventOverloaded,
		kvstore.EventCaughtUp}
}

// Set chooses the observer events a scheduler publishes, by kind. The nil
// set is the default: every kind but fired (the fire stream has every fire
// already).
type Set map[kvstore.EventKind]bool

// Has reports whether events of kind are published.
func (s Set) Has(kind kvstore.EventKind) bool {
	if s == nil {
		return kind != kvstore.EventFired
	}
	return s[kind]
}

// String lists the set's kinds, comma-separated, in SchedulerEvents order.
func (s Set) String() string {
	var out []string
	for _, k := range SchedulerEvents() {
		if s.Has(k) {
			out = append(out, string(k))
		}
	}
	return strings.Join(out, ",")
}

// Parse reads a comma-separated list of event kinds, as `scheduler run
// --events` takes it: kinds of SchedulerEvents, "default" (every kind but
// fired), "all" or "none", e.g. "default,fired" or "fired,missed". An
// unknown word is a *kvstore.FieldError on field events naming it.
func Parse(list string) (Set, error) {
	set := Set{}
	for word := range strings.SplitSeq(list, ",") {
		word = strings.TrimSpace(word)
		switch word {
		case "none", "":
		case "default", "all":
			for _, k := range SchedulerEvents() {
				if word == "all" || k != kvstore.EventFired {
					set[k] = true
				}
			}
		default:
			if !slices.Contains(SchedulerEvents(), kvstore.EventKind(word)) {
				return nil, &kvstore.FieldError{Field: "events", Value: word,
					Reason: fmt.Sprintf("not an event kind; want default, all, none or kinds of %s", all())}
			}
			set[kvstore.EventKind(word)] = true
		}
	}
	return set, nil
}

// all lists every kind a set may hold.
func all() string {
	var out []string
	for _, k := range SchedulerEvents() {
		out = append(out, string(k))
	}
	return strings.Join(out, ", ")
}
