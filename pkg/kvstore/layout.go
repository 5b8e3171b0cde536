package kvstore

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/jetsched/jetsched/internal/fieldcheck"
)

// Layout names every bucket, stream and subject jetsched uses. The zero value
// is the documented default layout; every name can be changed so that
// several tenants share one NATS system.
type Layout struct {
	// Prefix is the first token of every subject. Default "sched".
	Prefix string
	// SpecsBucket holds schedule specs. Default "sched_specs".
	SpecsBucket string
	// StateBucket holds the scheduler's per-schedule state. Default "sched_state".
	StateBucket string
	// TicksBucket is the slot ledger. Default "sched_ticks".
	TicksBucket string
	// WakeupsBucket holds pending timers. Default "sched_wakeups".
	WakeupsBucket string
	// CalendarsBucket holds business calendars. Default "sched_calendars".
	CalendarsBucket string
	// LeasesBucket holds shard leases. Default "sched_leases".
	LeasesBucket string
	// FiresStream captures <prefix>.fire.>. Default "SCHED_FIRES".
	FiresStream string
	// WakeupsStream captures <prefix>.wakeup.>. Default "SCHED_WAKEUPS".
	WakeupsStream string
	// EventsStream captures <prefix>.event.>. Default "SCHED_EVENTS".
	EventsStream string
}

// NamedLayout is the layout whose every name derives from prefix as the
// defaults derive from "sched": buckets <prefix>_specs, _state, _ticks,
// _wakeups, _calendars, _leases; streams <PREFIX>_FIRES, _WAKEUPS,
// _EVENTS; subjects <prefix>.fire.>, <prefix>.api.> and so on.
// NamedLayout("sched") is the default layout.
func NamedLayout(prefix string) Layout {
	up := strings.ToUpper(prefix)
	return Layout{
		Prefix: prefix, SpecsBucket: prefix + "_specs", StateBucket: prefix + "_state", TicksBucket: prefix + "_ticks",
		WakeupsBucket: prefix + "_wakeups", CalendarsBucket: prefix + "_calendars", LeasesBucket: prefix + "_leases",
		FiresStream: up + "_FIRES", WakeupsStream: up + "_WAKEUPS", EventsStream: up + "_EVENTS",
	}
}

// ValidatePrefix checks a NamedLayout prefix: it becomes a subject token
// and part of bucket and stream names, so it is letters, digits, '_' and
// '-' only.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return fieldcheck.New("name-prefix", prefix, "must not be empty")
	}
	for _, r := range prefix {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fieldcheck.New("name-prefix", prefix, fmt.Sprintf("%q is not allowed: letters, digits, '_' and '-' only (it names buckets, streams and subjects)", r))
		}
	}
	return nil
}

// WithDefaults returns l with every empty name set to its default.
func (l Layout) WithDefaults() Layout {
	l.Prefix = cmp.Or(l.Prefix, "sched")
	l.SpecsBucket = cmp.Or(l.SpecsBucket, "sched_specs")
	l.StateBucket = cmp.Or(l.StateBucket, "sched_state")
	l.TicksBucket = cmp.Or(l.TicksBucket, "sched_ticks")
	l.WakeupsBucket = cmp.Or(l.WakeupsBucket, "sched_wakeups")
	l.CalendarsBucket = cmp.Or(l.CalendarsBucket, "sched_calendars")
	l.LeasesBucket = cmp.Or(l.LeasesBucket, "sched_leases")
	l.FiresStream = cmp.Or(l.FiresStream, "SCHED_FIRES")
	l.WakeupsStream = cmp.Or(l.WakeupsStream, "SCHED_WAKEUPS")
	l.EventsStream = cmp.Or(l.EventsStream, "SCHED_EVENTS")
	return l
}

// FireSubject is the subject a slot of schedule id is published on:
// "sched.fire.<workflow>.<schedule id>". The schedule in the subject
// makes the fire stream the ledger of dispatched slots: the last message
// of a schedule is one direct get by subject away, and workers filter
// "sched.fire.<workflow>.>" (WorkflowFires).
func (l Layout) FireSubject(workflow, id string) string {
	return l.WithDefaults().Prefix + ".fire." + workflow + "." + id
}

// WorkflowFires is the filter of every fire of a workflow:
// "sched.fire.<workflow>.>".
func (l Layout) WorkflowFires(workflow string) string {
	return l.WithDefaults().Prefix + ".fire." + workflow + ".>"
}

// ScheduleFires is the filter of every fire of schedule id whatever its
// workflow (a spec's workflow may change): "sched.fire.*.<schedule id>".
func (l Layout) ScheduleFires(id string) string {
	return l.WithDefaults().Prefix + ".fire.*." + id
}

// LegacyFireSubject is the subject fires of a workflow were published on
// before the schedule joined it: "sched.fire.<workflow>". Schedulers no
// longer publish on it; workers and the ledger read it for one more
// release, while a fleet is upgraded (see docs/fire-messages.md).
func (l Layout) LegacyFireSubject(workflow string) string {
	return l.WithDefaults().Prefix + ".fire." + workflow
}

// FireSubjects is the wildcard the fire stream captures: "sched.fire.>".
func (l Layout) FireSubjects() string { return l.WithDefaults().Prefix + ".fire.>" }

// WakeupSubject is the subject a due timer is published on:
// "sched.wakeup.<workflow>".
func (l Layout) WakeupSubject(workflow string) string {
	return l.WithDefaults().Prefix + ".wakeup." + workflow
}

// WakeupSubjects is the wildcard the wakeup stream captures.
func (l Layout) WakeupSubjects() string { return l.WithDefaults().Prefix + ".wakeup.>" }

// EventSubject is the subject of an observer event about a schedule (or
// an instance, or a shard): "sched.event.<kind>.<schedule id>". The id is
// one subject token: a valid id is one already, and a key that is not (a
// record written straight into the bucket under "a.b", say) has '.', '*',
// '>', '%' and spaces percent-encoded, so that `sched.event.<kind>.*` sees
// every event; the event's body carries the key as it is.
func (l Layout) EventSubject(kind EventKind, id string) string {
	return l.WithDefaults().Prefix + ".event." + string(kind) + "." + subjectToken(id)
}

// TimerEventSubject is the subject of an observer event about a timer:
// "sched.event.<kind>.<run>.<step>", its key's two tokens.
func (l Layout) TimerEventSubject(kind EventKind, key string) string {
	return l.WithDefaults().Prefix + ".event." + string(kind) + "." + key
}

// subjectToken makes s one subject token: '.', '*', '>', '%', spaces and
// control characters become %XX; anything else is kept. "" becomes "%00"
// (a subject has no empty tokens).
func subjectToken(s string) string {
	if s == "" {
		return "%00"
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' || c == '*' || c == '>' || c == '%' || c <= ' ' || c == 0x7f {
			if b == nil {
				b = append(make([]byte, 0, len(s)+8), s[:i]...)
			}
			b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&15])
			continue
		}
		if b != nil {
			b = append(b, c)
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

// EventSubjects is the wildcard the event stream captures.
func (l Layout) EventSubjects() string { return l.WithDefaults().Prefix + ".event.>" }

// Buckets names every key-value bucket of the layout.
func (l Layout) Buckets() []string {
	l = l.WithDefaults()
	return []string{l.SpecsBucket, l.StateBucket, l.TicksBucket, l.WakeupsBucket, l.CalendarsBucket, l.LeasesBucket}
}

// CancelSubject is where a scheduler asks workers to cancel a running
// slot (overlap policy cancel_other): "sched.cancel.<workflow>.<schedule
// id>". The workflow comes before the id so that a worker's permissions
// can be scoped to its workflows ("sched.cancel.invoices.>").
func (l Layout) CancelSubject(workflow, id string) string {
	return l.WithDefaults().Prefix + ".cancel." + workflow + "." + id
}

// DoneSubjects is the wildcard schedulers listen on for completions: it
// covers DoneSubject and also the deprecated form without the workflow,
// "sched.done.<schedule id>", which schedulers still read for one release
// (it cannot be scoped per workflow, so the shipped worker accounts may
// not publish on it; report on DoneSubject).
func (l Layout) DoneSubjects() string { return l.WithDefaults().Prefix + ".done.>" }

// DoneSubject is where workers report the completion of a slot:
// "sched.done.<workflow>.<schedule id>". The workflow comes before the id
// so that a worker's permissions can be scoped to its workflows
// ("sched.done.invoices.>"); the scheduler accepts a report only when the
// workflow is the one the slot was fired for.
func (l Layout) DoneSubject(workflow, id string) string {
	return l.WithDefaults().Prefix + ".done." + workflow + "." + id
}

// DeadLetterSubject is where a worker keeps a copy of a message it gave up
// on: "sched.event.dead_letter.<workflow>.<id>", captured by the event
// stream. id is the schedule id for a fire and the message id
// ("wakeup.<run>.<step>.<due ms>") for a wakeup, made one subject token as
// in EventSubject, so `sched.event.dead_letter.<workflow>.*` sees both. The
// workflow comes first so that a worker's permissions can be scoped to its
// workflows ("sched.event.dead_letter.invoices.>").
func (l Layout) DeadLetterSubject(workflow, id string) string {
	return l.WithDefaults().Prefix + ".event." + string(EventDeadLetter) + "." + workflow + "." + subjectToken(id)
}
