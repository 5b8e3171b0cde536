package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/console"
)

// TestShippedCalendarPages: the calendars page lists the shipped calendars
// (builtin:NAME) after the stored ones, and each has its year grid.
func TestShippedCalendarPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	e.cli("calendar", "put", "acme", e.file("us.json", usCalendar))
	code, page := e.get(viewerToken, "/calendars")
	if code != http.StatusOK || !strings.Contains(page, `<a href="/calendars/builtin:us-federal">builtin:us-federal</a>`) ||
		!strings.Contains(page, "shipped") || strings.Index(page, "acme") > strings.Index(page, "builtin:") {
		t.Fatalf("calendars page: %d:\n%s", code, page)
	}
	code, page = e.get(viewerToken, "/calendars/builtin:us-federal?year=2022")
	if code != http.StatusOK || !strings.Contains(page, `data-date="2022-12-26" title="2022-12-26: holiday &#34;Christmas Day&#34;`) {
		t.Errorf("builtin:us-federal page: %d:\n%s", code, page)
	}
	// A half day (NYSE's early close the day after Thanksgiving) is marked
	// in the grid and listed with the holidays.
	code, page = e.get(viewerToken, "/calendars/builtin:us-nyse?year=2026")
	if code != http.StatusOK || !strings.Contains(page, `<td class="half" data-date="2026-11-27" title="2026-11-27: half day`) ||
		!strings.Contains(page, "(half day)") {
		t.Errorf("builtin:us-nyse page: %d:\n%s", code, page)
	}
	if code, page = e.get(viewerToken, "/calendars/builtin:nope"); code != http.StatusBadRequest || !strings.Contains(page, "no such shipped calendar") {
		t.Errorf("builtin:nope page: %d:\n%s", code, page)
	}
}
