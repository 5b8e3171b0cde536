package adminapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/testcal"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// minuteAWeek is open one minute a week, with holidays.
const minuteAWeek = testcal.MinuteAWeek

// TestWakeupWorkingTimeOnASparseCalendar: on a calendar open a minute a
// week, a count it cannot reach by the end of year 9999 is refused as
// invalid naming when (or when_expr) and the year, not `internal` after a
// walk through millions of days; 6000 whours (about 7,000 years) is past
// the supported time range (2261) and says so; 150 whours (about 170
// years) is registered with the due time that counting Monday by Monday
// gives.
func TestWakeupWorkingTimeOnASparseCalendar(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	a.ok("calendar.put", admin.CalendarRequest{Name: "minute", Calendar: json.RawMessage(minuteAWeek)}, nil)
	for _, when := range []string{"30000 whours", "876000 whours"} {
		e := a.refused("wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", When: when, Calendar: "minute"}, admin.CodeInvalid, "when")
		if !strings.Contains(e.Message, "9999") {
			t.Errorf("%s: %q does not say why", when, e.Message)
		}
	}
	e := a.refused("wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", WhenExpr: `addWorking(now, "876000h")`, Calendar: "minute"},
		admin.CodeInvalid, "when_expr")
	if !strings.Contains(e.Message, "9999") {
		t.Errorf("addWorking(now, 876000h): %q does not say why", e.Message)
	}

	e = a.refused("wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", When: "6000 whours", Calendar: "minute"}, admin.CodeInvalid, "when")
	if !strings.Contains(e.Message, "supported time range") {
		t.Errorf("6000 whours: %q does not say why", e.Message)
	}

	var out struct {
		Timer kvstore.Timer `json:"timer"`
	}
	a.ok("wakeup.add", admin.WakeupRequest{Run: "r", Step: "s", Workflow: "w", When: "150 whours", Calendar: "minute"}, &out)
	c, err := calendar.Parse([]byte(minuteAWeek))
	if err != nil {
		t.Fatal(err)
	}
	if want := countMondays(c, out.Timer.Created, 150*time.Hour); !out.Timer.Due.Equal(want) {
		t.Fatalf("150 whours from %s: due %s, want %s", out.Timer.Created, out.Timer.Due, want)
	}
}

// countMondays counts d of working time from from, Monday by Monday, on
// a calendar whose only working time is Monday 09:00-09:01 (when
// IsWorkingDay).
func countMondays(c *calendar.Calendar, from time.Time, d time.Duration) time.Time {
	loc := c.Location()
	y, m, dd := from.In(loc).Date()
	day := time.Date(y, m, dd, 12, 0, 0, 0, loc)
	for day.Weekday() != time.Monday {
		day = day.AddDate(0, 0, 1)
	}
	for ; ; day = day.AddDate(0, 0, 7) {
		if !c.IsWorkingDay(day) {
			continue
		}
		y, m, dd := day.Date()
		start, end := time.Date(y, m, dd, 9, 0, 0, 0, loc), time.Date(y, m, dd, 9, 1, 0, 0, loc)
		if !end.After(from) {
			continue
		}
		if start.Before(from) {
			start = from
		}
		if avail := end.Sub(start); d > avail {
			d -= avail
			continue
		}
		return start.Add(d)
	}
}
