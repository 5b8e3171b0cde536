package adminapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/admin"
)

// TestCalendarCount: calendar.count counts working days and working time
// in [from, to) against a stored or an inline calendar, negative
// backwards, and refuses bad input naming the field.
func TestCalendarCount(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	cal := json.RawMessage(`{"zone":"America/New_York","weekend":["sat","sun"],
		"holidays":[{"name":"Christmas Day","date":"12-25","observed":"nearest"}]}`)
	a.ok("calendar.put", admin.CalendarRequest{Name: "us", Calendar: cal}, nil)
	for _, req := range []admin.CalendarCountRequest{
		{Name: "us", From: "2026-12-01T00:00:00-05:00", To: "2026-12-31T00:00:00-05:00"},
		{Calendar: cal, From: "2026-12-01T05:00:00Z", To: "2026-12-31T05:00:00Z"},
	} {
		var out admin.CalendarCountResponse
		a.ok("calendar.count", req, &out)
		// December 1 to 30: 22 weekdays less Christmas; 9 hours each.
		if out.WorkingDays != 21 || out.WorkingTime != "189h0m0s" || out.WorkingHours != 189 || out.Zone != "America/New_York" ||
			out.From.Format("2006-01-02T15:04:05Z07:00") != "2026-12-01T00:00:00-05:00" {
			t.Errorf("%+v: %+v", req, out)
		}
		req.From, req.To = req.To, req.From
		a.ok("calendar.count", req, &out)
		if out.WorkingDays != -21 || out.WorkingTime != "-189h0m0s" || out.WorkingHours != -189 {
			t.Errorf("backwards %+v: %+v", req, out)
		}
	}
	for _, c := range []struct {
		req   admin.CalendarCountRequest
		code  string
		field string
		says  string
	}{
		{admin.CalendarCountRequest{Name: "us", From: "yesterday", To: "now"}, admin.CodeInvalid, "from", "RFC 3339"},
		{admin.CalendarCountRequest{Name: "us", From: "now", To: "now+3"}, admin.CodeInvalid, "to", "needs a unit"},
		{admin.CalendarCountRequest{Name: "us", Calendar: cal, From: "now", To: "now"}, admin.CodeInvalid, "calendar", "not both"},
		{admin.CalendarCountRequest{From: "now", To: "now"}, admin.CodeInvalid, "calendar", ""},
		{admin.CalendarCountRequest{Calendar: json.RawMessage(`{"zone":"Nowhere/X"}`), From: "now", To: "now"}, admin.CodeInvalid, "calendar", "zone"},
		{admin.CalendarCountRequest{Name: "nosuch", From: "now", To: "now"}, admin.CodeNotFound, "", `calendar "nosuch"`},
		{admin.CalendarCountRequest{Calendar: json.RawMessage(`{"zone":"UTC","hours":{"mon-sun":["00:00-24:00"]}}`),
			From: "1700-01-01T00:00:00Z", To: "2100-01-01T00:00:00Z"}, admin.CodeInvalid, "from", "longer than 292 years"},
	} {
		e := a.refused("calendar.count", c.req, c.code, c.field)
		if !strings.Contains(e.Message, c.says) {
			t.Errorf("%+v: %q, want it to say %q", c.req, e.Message, c.says)
		}
	}
}
