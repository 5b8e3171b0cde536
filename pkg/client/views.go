package client

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// ScheduleState is where a schedule stands; every schedule is in exactly
// one (the admin API's listing states).
type ScheduleState string

// Schedule states.
const (
	// StateActive: it fires on its plan.
	StateActive ScheduleState = admin.StateActive
	// StatePaused: an operator paused it (ScheduleInfo.Paused says why).
	StatePaused ScheduleState = admin.StatePaused
	// StateEnded: its recurrence has no further fire time.
	StateEnded ScheduleState = admin.StateEnded
	// StateInvalid: its record does not validate (ScheduleInfo.Invalid).
	StateInvalid ScheduleState = admin.StateInvalid
	// StatePlanned: valid and not fired yet (Next is the planned first
	// fire once a scheduler has seen it; zero before).
	StatePlanned ScheduleState = admin.StatePlanned
)

// ScheduleInfo is a schedule as registered, with what the schedulers know
// of it. It is the client's own view: the engine's records may change
// shape, this does not.
type ScheduleInfo struct {
	Key string
	// Revision is the registration's revision, for IfRevision.
	Revision uint64
	Workflow string
	// Recurrence says when it fires, as registered: "cron 0 9 * * MON-FRI",
	// "every 1h0m0s", "at 2026-12-01T09:00:00Z" or "business_day 1 09:00".
	Recurrence string
	// Zone is the IANA zone the recurrence is read in ("" for UTC).
	Zone string
	// DomDow is the cron day rule as registered (a cronx.DomDow name; ""
	// for the default, "cronie").
	DomDow string
	// Input is the fire message body.
	Input       json.RawMessage
	Description string
	// Calendar names the business calendar applied ("" for none, "inline"
	// for one carried in the registration), and HolidayRoll its rule (a
	// calendar.Roll name; "" for "skip").
	Calendar    string
	HolidayRoll string
	// Static names the set that declares the schedule (client.Static or
	// scheduler run --schedules); "" for one registered alone.
	Static string
	// Labels are the schedule's labels (WithLabels); nil when none.
	Labels map[string]string
	// Misfire and Overlap are the policies in force (defaults filled in).
	Misfire kvstore.MisfirePolicy
	Overlap kvstore.OverlapPolicy

	State ScheduleState
	// Next is the next slot; zero when none is planned.
	Next time.Time
	// Paused is set while an operator pauses the schedule.
	Paused *Pause
	// Fires counts slots fired; Missed and Skipped those recorded without
	// firing (misfire policy; pause, overlap, calendar).
	Fires, Missed, Skipped uint64
	// Running is the fired slot still awaiting its completion report
	// (overlap policies other than kvstore.OverlapAllow).
	Running string
	// LastSlot is the latest slot claimed, and LastStatus its ledger
	// status ("dispatched", "completed", "failed", "cancelled", ...).
	LastSlot   time.Time
	LastStatus string
	// Invalid says why the registration does not validate ("" when it
	// does).
	Invalid string
	// Omitted names the fields a listing left out because they are larger
	// than 1 KiB ("input", "calendar_inline"); Get returns them.
	Omitted []string
}

// Pause is an operator's pause of a schedule.
type Pause struct {
	Note  string
	Since time.Time
	// Until is when it ends by itself (zero: at Resume).
	Until time.Time
}

// newScheduleInfo is the view of the admin API's schedule record.
func newScheduleInfo(v admin.ScheduleInfo) ScheduleInfo {
	s := v.Spec
	info := ScheduleInfo{
		Key: v.ID, Revision: v.Revision, Workflow: s.Workflow, Recurrence: recurrenceText(s), Zone: s.TZ,
		DomDow: s.DomDow, Input: s.Input, Description: s.Description, Calendar: s.Calendar,
		HolidayRoll: s.HolidayRoll, Static: s.Static, Labels: s.Labels,
		Misfire: cmp.Or(s.Misfire, kvstore.MisfireSkip),
		Overlap: cmp.Or(s.Overlap, kvstore.OverlapAllow),
		State:   ScheduleState(readmodel.StateOf(v)), LastStatus: v.LastStatus, Invalid: v.Invalid, Omitted: v.Omitted,
	}
	if len(s.CalendarInline) > 0 {
		info.Calendar = "inline"
	}
	if v.LastSlot != nil {
		info.LastSlot = *v.LastSlot
	}
	if st := v.State; st != nil {
		info.Next, info.Fires, info.Missed, info.Skipped = st.Next, st.Fires, st.Missed, st.Skipped
		if p := st.Paused; p != nil {
			info.Paused = &Pause{Note: p.Note, Since: p.At, Until: p.Until}
		}
		if r := st.Running; r != nil {
			info.Running = r.SlotID
		}
	}
	return info
}

// recurrenceText says when a spec fires, as Recurrence's constructors
// word it (the words DefaultKey hashes).
func recurrenceText(s kvstore.Spec) string {
	switch {
	case s.Cron != "":
		return "cron " + s.Cron
	case s.Every != "":
		return "every " + s.Every
	case s.At != nil:
		return "at " + s.At.UTC().Format(time.RFC3339Nano)
	case s.BusinessDay != 0:
		return fmt.Sprintf("business_day %d %s", s.BusinessDay, s.Time)
	}
	return ""
}

// TimerInfo is a pending timer: the client's own view of it.
type TimerInfo struct {
	Run, Step, Workflow string
	// Due is when its wakeup is published on sched.wakeup.<workflow>.
	Due time.Time
	// When is the form it was registered with ("48 whours", "02:00", ...),
	// computed in Zone and against Calendar.
	When, Zone, Calendar string
	// Payload is the wakeup message body.
	Payload json.RawMessage
	// Condition is the token the worker checks before acting.
	Condition string
	// ExpiresAt drops the timer if it is not delivered by then (zero:
	// never).
	ExpiresAt time.Time
	Created   time.Time
	// Rearms counts "not ready, retry at" re-registrations.
	Rearms int
	// Labels are the timer's labels (wakeup.Request.Labels); nil when
	// none.
	Labels map[string]string
	// Firing: a scheduler has claimed the timer and is publishing its
	// wakeup; a cancel now loses the race (WakeupAlreadyFired).
	Firing bool
}

func newTimerInfo(e kvstore.TimerEntry) TimerInfo {
	t := e.Timer
	return TimerInfo{Run: t.Run, Step: t.Step, Workflow: t.Workflow, Due: t.Due, When: t.When, Zone: t.Zone,
		Calendar: t.Calendar, Payload: t.Payload, Condition: t.Condition, ExpiresAt: t.ExpiresAt, Created: t.Created,
		Rearms: t.Rearms, Labels: t.Labels, Firing: t.Claim != nil}
}

// CancelOutcome is what CancelWakeup did.
type CancelOutcome string

// Outcomes of CancelWakeup.
const (
	// WakeupCancelled: the timer was pending and will not fire.
	WakeupCancelled CancelOutcome = wakeup.OutcomeCancelled
	// WakeupAlreadyFired: a scheduler was already firing it; the cancel
	// lost that race, which is harmless when the worker checks the
	// wakeup's condition (Config.ConditionHolds in pkg/worker).
	WakeupAlreadyFired CancelOutcome = wakeup.OutcomeFired
)
