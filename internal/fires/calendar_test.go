package fires_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// midDayZone picks a zone where it is neither close to midnight nor to
// the ends of the windows the tests build, so that "today" is stable.
func midDayZone(t *testing.T) *time.Location {
	t.Helper()
	for _, name := range []string{"UTC", "Asia/Tokyo", "America/New_York", "Asia/Kolkata", "Pacific/Auckland", "America/Los_Angeles"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		if h := time.Now().In(loc).Hour(); h >= 2 && h <= 21 {
			return loc
		}
	}
	t.Fatal("no zone at mid-day (cannot happen: the zones span the clock)")
	return nil
}

func putCalendar(t *testing.T, h *harness, name string, cal map[string]any) {
	t.Helper()
	data, err := json.Marshal(cal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.PutCalendar(context.Background(), name, data); err != nil {
		t.Fatal(err)
	}
}

// TestEngineBusinessHoursMoveAFire: with working hours starting 3 seconds
// from now, a per-second schedule's first occurrences move to the working
// start, and that fire says so in its headers and in its tick.
func TestEngineBusinessHoursMoveAFire(t *testing.T) {
	t.Parallel()
	h := setup(t)
	loc := midDayZone(t)
	nc := h.js.Conn()
	moved, err := nc.SubscribeSync("sched.event.moved.>")
	if err != nil {
		t.Fatal(err)
	}
	defer moved.Unsubscribe()
	open := time.Now().In(loc).Truncate(time.Second).Add(3 * time.Second)
	hours := open.Format("15:04:05") + "-" + open.Add(time.Hour).Format("15:04:05")
	putCalendar(t, h, "window", map[string]any{"zone": loc.String(), "hours": map[string]any{"mon-sun": []string{hours}}})
	h.engine(fires.Config{})
	h.put("bho", kvstore.Spec{Workflow: "wf", Cron: "* * * * * *", TZ: loc.String(), Calendar: "window", BusinessHoursOnly: true})

	fires := h.waitFires("bho", 10*time.Second, atLeast(3))
	first := fires[0].meta
	if !first.ScheduledAt.Equal(open) || first.Reason != kvstore.ReasonMoved || first.NominalAt.IsZero() || !first.NominalAt.Before(open) {
		t.Fatalf("first fire %+v, want the working start %v, moved from an earlier nominal time", first, open)
	}
	if !strings.Contains(first.Note, "outside working hours") {
		t.Fatalf("note %q does not say why", first.Note)
	}
	checkCadence(t, fires, time.Second)
	if fires[1].meta.Reason != "" {
		t.Fatalf("second fire %+v is not regular", fires[1].meta)
	}
	tick := h.waitTick(first.SlotID)
	if !strings.Contains(tick.Reason, "moved") || !strings.Contains(tick.Reason, "outside working hours") {
		t.Fatalf("tick reason %q", tick.Reason)
	}
	if _, err := moved.NextMsg(5 * time.Second); err != nil {
		t.Fatalf("no moved event: %v", err)
	}
}

// TestEngineHolidaySkipsAndCalendarChangeReplans: a holiday today skips
// the day (one skipped tick and event naming the rule); removing the
// holiday from the calendar re-plans the schedule, which fires again.
func TestEngineHolidaySkipsAndCalendarChangeReplans(t *testing.T) {
	t.Parallel()
	h := setup(t)
	loc := midDayZone(t)
	today := time.Now().In(loc).Format("2006-01-02")
	nc := h.js.Conn()
	skipped, err := nc.SubscribeSync("sched.event.skipped.>")
	if err != nil {
		t.Fatal(err)
	}
	defer skipped.Unsubscribe()
	allDay := map[string]any{"mon-sun": []string{"00:00-24:00"}}
	putCalendar(t, h, "office", map[string]any{"zone": loc.String(), "hours": allDay,
		"holidays": []map[string]any{{"name": "Test Day", "dates": []string{today}}}})
	h.engine(fires.Config{})
	h.put("sec", kvstore.Spec{Workflow: "wf", Cron: "* * * * * *", TZ: loc.String(), Calendar: "office"})

	msg, err := skipped.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no skipped event: %v", err)
	}
	var ev kvstore.Event
	if err := json.Unmarshal(msg.Data, &ev); err != nil || !strings.Contains(ev.Reason, `"Test Day"`) {
		t.Fatalf("skipped event %s (%v)", msg.Data, err)
	}
	tick := h.waitTick(kvstore.SlotID("sec", ev.Slot))
	if tick.Status != kvstore.TickSkipped || !strings.Contains(tick.Reason, "Test Day") {
		t.Fatalf("tick %+v", tick)
	}
	st, _, err := h.store.GetState(context.Background(), "sec")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Next.In(loc).Format("2006-01-02"); got == today {
		t.Fatalf("next fire %v is still on the holiday", st.Next)
	}
	if n := len(h.of("sec")); n != 0 {
		t.Fatalf("%d fires on the holiday", n)
	}

	// The holiday is called off: the schedule re-plans and fires today.
	putCalendar(t, h, "office", map[string]any{"zone": loc.String(), "hours": allDay})
	fires := h.waitFires("sec", 10*time.Second, atLeast(2))
	if got := fires[0].meta.ScheduledAt.In(loc).Format("2006-01-02"); got != today {
		t.Fatalf("fire on %s, want today %s", got, today)
	}
}

// TestEngineUnknownCalendarIsInvalidUntilItExists: a spec written straight
// into the bucket naming a missing calendar is reported invalid, and starts
// firing once the calendar is stored.
func TestEngineUnknownCalendarIsInvalidUntilItExists(t *testing.T) {
	t.Parallel()
	h := setup(t)
	nc := h.js.Conn()
	invalid, err := nc.SubscribeSync("sched.event.invalid.>")
	if err != nil {
		t.Fatal(err)
	}
	defer invalid.Unsubscribe()
	h.engine(fires.Config{})
	specs, err := h.js.KeyValue(context.Background(), "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	raw := `{"workflow":"wf","cron":"* * * * * *","calendar":"later"}`
	if _, err := specs.Put(context.Background(), "cal-later", []byte(raw)); err != nil {
		t.Fatal(err)
	}
	msg, err := invalid.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var ev kvstore.Event
	if err := json.Unmarshal(msg.Data, &ev); err != nil || ev.Field != "calendar" {
		t.Fatalf("invalid event %s (%v), want field calendar", msg.Data, err)
	}
	putCalendar(t, h, "later", map[string]any{"zone": "UTC", "hours": map[string]any{"mon-sun": []string{"00:00-24:00"}}})
	h.waitFires("cal-later", 10*time.Second, atLeast(1))
}

// TestCalendarChangeThatStopsASchedule: a calendar changed so that a
// schedule using it can never fire again makes that schedule invalid, with
// an event naming the calendar, rather than quietly ended; changed back,
// it fires again.
func TestCalendarChangeThatStopsASchedule(t *testing.T) {
	t.Parallel()
	h := setup(t)
	invalid, err := h.js.Conn().SubscribeSync("sched.event.invalid.*")
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]any{"zone": "UTC", "hours": map[string]any{"mon-sun": []string{"00:00-24:00"}}}
	putCalendar(t, h, "ops", open)
	h.engine(fires.Config{})
	h.put("ops-job", kvstore.Spec{Workflow: "wf", Cron: "* * * * * *", Calendar: "ops"})
	h.waitFires("ops-job", 10*time.Second, atLeast(1))
	putCalendar(t, h, "ops", map[string]any{"zone": "UTC", "holidays": []any{map[string]any{"name": "Closed for good", "from": "01-01", "to": "12-31"}}})
	ev := nextEvent(t, invalid, 15*time.Second, "invalid event after the calendar change")
	if ev.Schedule != "ops-job" || ev.Field != "calendar" || !strings.Contains(ev.Reason, "never fires") || !strings.Contains(ev.Reason, "Closed for good") {
		t.Fatalf("invalid event %+v, want ops-job, field calendar, never fires by rule \"Closed for good\"", ev)
	}
	reopened := time.Now()
	putCalendar(t, h, "ops", open)
	h.firesAfter("ops-job", reopened, 10*time.Second)
}
