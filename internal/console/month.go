package console

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// maxFiresPerDay bounds the fires the month view walks in one day (an
// every-5s schedule has 17,280); past it the day says "at least".
const maxFiresPerDay = 500

// dayCell is one day of a month view.
type dayCell struct {
	Day     int
	Date    string // YYYY-MM-DD
	Fires   int
	AtLeast bool // Fires is a lower bound
	Skipped []string
	Moved   []string
	Holiday string
	Today   bool
	Past    bool
}

// Class is the cell's CSS classes.
func (c *dayCell) Class() string {
	var cls []string
	if c.Fires > 0 {
		cls = append(cls, "fire")
	}
	if len(c.Skipped) > 0 {
		cls = append(cls, "skipped")
	}
	if len(c.Moved) > 0 {
		cls = append(cls, "moved")
	}
	if c.Holiday != "" {
		cls = append(cls, "holiday")
	}
	if c.Today {
		cls = append(cls, "today")
	}
	if c.Past {
		cls = append(cls, "past")
	}
	return strings.Join(cls, " ")
}

// Summary says what happens on the day, for the cell's title and for
// screen readers.
func (c *dayCell) Summary() string {
	var parts []string
	if c.Fires > 0 {
		n := fmt.Sprint(c.Fires)
		if c.AtLeast {
			n = "at least " + n
		}
		if c.Fires == 1 && !c.AtLeast {
			parts = append(parts, "1 fire")
		} else {
			parts = append(parts, n+" fires")
		}
	}
	if c.Holiday != "" {
		parts = append(parts, "holiday: "+c.Holiday)
	}
	for _, s := range c.Skipped {
		parts = append(parts, "skipped: "+s)
	}
	for _, m := range c.Moved {
		parts = append(parts, "moved: "+m)
	}
	if len(parts) == 0 {
		return "no fire"
	}
	return strings.Join(parts, "; ")
}

// monthView is a month of a schedule, Monday first.
type monthView struct {
	Label      string
	Prev, Next string // links to the neighbouring months
	Weeks      [][]*dayCell
	Note       string
}

// buildMonth marks the days of month (its first instant in loc): past
// days from the ledger (fires, skipped and moved slots with their
// reasons), days from now on from the recurrence as the engine computes
// it (cronx.Explain: calendar skips and moves, DST), and the calendar's
// holidays.
func buildMonth(month time.Time, loc *time.Location, now time.Time, sched cronx.Schedule, cal *calendar.Calendar, ticks []admin.HistoryItem, q url.Values) monthView {
	end := month.AddDate(0, 1, 0)
	v := monthView{Label: month.Format("January 2006")}
	link := func(t time.Time) string {
		q2 := url.Values{}
		for k, vs := range q {
			q2[k] = vs
		}
		q2.Set("month", t.Format("2006-01"))
		return "?" + q2.Encode() + "#month"
	}
	v.Prev, v.Next = link(month.AddDate(0, -1, 0)), link(end)
	days := map[int]*dayCell{}
	today := now.In(loc)
	for d := month; d.Before(end); d = d.AddDate(0, 0, 1) {
		c := &dayCell{Day: d.Day(), Date: d.Format("2006-01-02")}
		c.Today = d.Year() == today.Year() && d.YearDay() == today.YearDay()
		c.Past = d.AddDate(0, 0, 1).Before(now) || d.AddDate(0, 0, 1).Equal(now)
		if cal != nil {
			if h, ok := cal.Holiday(d.Add(12 * time.Hour)); ok {
				c.Holiday = h.Name
				if h.Observed {
					c.Holiday += " (observed)"
				}
			}
		}
		days[d.Day()] = c
	}
	for _, t := range ticks {
		c := days[t.Slot.In(loc).Day()]
		if c == nil || !t.Slot.Before(now) {
			continue
		}
		switch t.Status {
		case kvstore.TickSkipped, kvstore.TickMissed:
			c.Skipped = append(c.Skipped, reasonOr(t.Reason, string(t.Status)))
		default:
			c.Fires++
			if strings.HasPrefix(t.Reason, "moved") {
				c.Moved = append(c.Moved, t.Reason)
			}
		}
	}
	if sched != nil {
		markFuture(days, month, end, loc, now, sched)
	} else {
		v.Note = "The recurrence does not compile: only the ledger's days are marked."
	}
	cells := make([]*dayCell, len(days))
	for d, c := range days {
		cells[d-1] = c
	}
	v.Weeks = weeksOf(month, cells)
	return v
}

// markFuture walks the recurrence from max(now, month) to the month's
// end, day by day, counting at most maxFiresPerDay fires a day.
func markFuture(days map[int]*dayCell, month, end time.Time, loc *time.Location, now time.Time, sched cronx.Schedule) {
	t := month.Add(-time.Nanosecond)
	if now.After(t) {
		t = now
	}
	perDay := map[int]int{}
	var nominal time.Time // the occurrence the fire at t came from (zero: t, or not a fire)
	for guard := 0; guard < 31*(maxFiresPerDay+2); guard++ {
		st := cronx.ExplainAfter(sched, t, nominal)
		for _, sk := range st.Skipped {
			if n := sk.Nominal.In(loc); !sk.Nominal.Before(month) && sk.Nominal.Before(end) && !sk.Nominal.Before(now) {
				if c := days[n.Day()]; c != nil && len(c.Skipped) < 5 {
					c.Skipped = append(c.Skipped, n.Format("15:04")+" "+sk.Reason)
				}
			}
		}
		if st.At.IsZero() || !st.At.Before(end) {
			return
		}
		at := st.At.In(loc)
		c := days[at.Day()]
		c.Fires++
		if st.Moved != "" && len(c.Moved) < 5 {
			c.Moved = append(c.Moved, st.Moved)
		}
		perDay[at.Day()]++
		t, nominal = st.At, st.Nominal
		if perDay[at.Day()] >= maxFiresPerDay {
			c.AtLeast = true
			next := time.Date(at.Year(), at.Month(), at.Day()+1, 0, 0, 0, 0, loc)
			t, nominal = next.Add(-time.Nanosecond), time.Time{}
		}
	}
}

// weeksOf lays out the days of a month (cells[i] is day i+1, first is
// day 1) in weeks, Monday first, padded with nil cells.
func weeksOf[T any](first time.Time, cells []*T) [][]*T {
	var weeks [][]*T
	week := make([]*T, (int(first.Weekday())+6)%7, 7)
	for _, c := range cells {
		week = append(week, c)
		if len(week) == 7 {
			weeks = append(weeks, week)
			week = make([]*T, 0, 7)
		}
	}
	if len(week) > 0 {
		weeks = append(weeks, append(week, make([]*T, 7-len(week))...))
	}
	return weeks
}

func reasonOr(reason, fallback string) string {
	if reason != "" {
		return reason
	}
	return fallback
}
