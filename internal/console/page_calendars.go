package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/calendar"
)

type calendarsData struct {
	base
	Rows    []admin.CalendarRow
	Total   int
	NextURL string
}

func (s *Server) calendarsPage(w http.ResponseWriter, r *http.Request) {
	d := calendarsData{base: s.base(r, "Calendars", "calendars", topicCalendars)}
	var pg admin.Page[admin.CalendarRow]
	status := http.StatusOK
	if err := s.api.call(r.Context(), "", "calendar.list", admin.CalendarListRequest{Cursor: r.URL.Query().Get("cursor"), Limit: admin.DefaultLimit}, &pg); err != nil {
		d.Error, status = err.Error(), statusOf(err)
	}
	d.Rows, d.Total = pg.Items, pg.Total
	if pg.NextCursor != "" {
		d.NextURL = "/calendars?cursor=" + pg.NextCursor
	}
	s.pages.render(w, status, "calendars", d)
}

type calendarData struct {
	base
	Name     string
	Zone     string
	Year     int
	Hours    []ruleView
	Rules    []ruleView
	Months   []monthGrid
	Off      []offDay
	Changes  targetChanges
	AuditMsg string
	Loc      *time.Location
}

// ruleView is a holiday rule (or a line of working hours) as its JSON
// says it.
type ruleView struct {
	Name   string
	Fields string
}

// monthGrid is one month of the year grid.
type monthGrid struct {
	Name  string
	Weeks [][]*gridDay
}

// gridDay is one day of the year grid.
type gridDay struct {
	Day    int
	Date   string
	Off    bool   // no working hours (a weekend, say)
	Reason string // why the day does not work ("" on a business day)
	Holiday,
	Observed bool
	Half bool // a half day: a business day with hours of its own
}

// Class is the day's CSS classes.
func (g *gridDay) Class() string {
	switch {
	case g.Holiday:
		return "holiday"
	case g.Half:
		return "half"
	case g.Off:
		return "off"
	}
	return "work"
}

// offDay is a holiday or a half day of the year with the rule that made
// it.
type offDay struct {
	Date     time.Time
	Name     string
	Rule     string
	Observed bool
	Half     bool
}

func (s *Server) calendarPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	d := calendarData{base: s.base(r, "Calendar "+name, "calendars", topicCalendars), Name: name, Loc: time.UTC}
	if err := fieldcheck.CalendarRef("calendar", name); err != nil {
		d.Error = err.Error()
		s.pages.render(w, http.StatusBadRequest, "calendar", d)
		return
	}
	var raw json.RawMessage
	if err := s.api.call(r.Context(), "", "calendar.get", admin.CalendarRequest{Name: name}, &raw); err != nil {
		d.Error = err.Error()
		s.pages.render(w, statusOf(err), "calendar", d)
		return
	}
	cal, err := calendar.Parse(raw)
	if err != nil {
		d.Error = "the stored calendar does not parse: " + err.Error()
		s.pages.render(w, http.StatusOK, "calendar", d)
		return
	}
	d.Loc = cal.Location()
	d.Zone = d.Loc.String()
	d.Year = time.Now().In(d.Loc).Year()
	status := http.StatusOK
	if y := r.URL.Query().Get("year"); y != "" {
		n, err := strconv.Atoi(y)
		if err != nil || n < 1970 || n > 2199 {
			d.Error, status = "year "+y+": want 1970 to 2199", http.StatusBadRequest
		} else {
			d.Year = n
		}
	}
	d.Hours, d.Rules = calendarRules(raw)
	d.Months, d.Off = yearGrid(cal, d.Year)
	d.Changes, d.AuditMsg = s.audit.changes("calendar", name)
	s.pages.render(w, status, "calendar", d)
}

// calendarRules lists the working hours and holiday rules of a calendar's
// canonical JSON.
func calendarRules(raw json.RawMessage) (hours, rules []ruleView) {
	var doc struct {
		Hours    map[string][]string          `json:"hours"`
		Holidays []map[string]json.RawMessage `json:"holidays"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return nil, nil
	}
	for days, spans := range doc.Hours {
		hours = append(hours, ruleView{Name: days, Fields: strings.Join(spans, ", ")})
	}
	slices.SortFunc(hours, func(a, b ruleView) int { return strings.Compare(dayOrder(a.Name), dayOrder(b.Name)) })
	for _, h := range doc.Holidays {
		var name string
		_ = json.Unmarshal(h["name"], &name)
		var keys []string
		for k := range h {
			if k != "name" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		var fields []string
		for _, k := range keys {
			fields = append(fields, k+": "+strings.Trim(string(h[k]), `"`))
		}
		rules = append(rules, ruleView{Name: name, Fields: strings.Join(fields, ", ")})
	}
	return hours, rules
}

// dayOrder sorts "mon-fri" before "sat".
func dayOrder(days string) string {
	first, _, _ := strings.Cut(days, "-")
	i := slices.Index([]string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, first)
	return fmt.Sprintf("%d%s", i, days)
}

// yearGrid marks every day of year: business day, half day, no working
// hours, or holiday (with the rule that made it).
func yearGrid(cal *calendar.Calendar, year int) ([]monthGrid, []offDay) {
	loc := cal.Location()
	var months []monthGrid
	var off []offDay
	for m := time.January; m <= time.December; m++ {
		first := time.Date(year, m, 1, 0, 0, 0, 0, loc)
		var days []*gridDay
		for d := first; d.Month() == m; d = d.AddDate(0, 0, 1) {
			noon := d.Add(12 * time.Hour)
			day := &gridDay{Day: d.Day(), Date: d.Format("2006-01-02"), Reason: cal.NonWorkingReason(noon)}
			if h, ok := cal.Holiday(noon); ok {
				day.Holiday, day.Observed = true, h.Observed
				off = append(off, offDay{Date: d, Name: h.Name, Rule: h.Rule, Observed: h.Observed})
			} else if h, ok := cal.HalfDay(noon); ok {
				day.Half = true
				day.Reason = "half day " + h.Name
				off = append(off, offDay{Date: d, Name: h.Name, Rule: h.Rule, Half: true})
			} else if day.Reason != "" {
				day.Off = true
			}
			days = append(days, day)
		}
		g := monthGrid{Name: m.String(), Weeks: weeksOf(first, days)}
		months = append(months, g)
	}
	return months, off
}
