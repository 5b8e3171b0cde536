package integration

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryShipsCalendars: the built binary carries the shipped calendars
// and checks one without any server: England's Christmas Day 2022 fell on
// a Sunday, after Boxing Day on the Monday its substitute is Tuesday 27.
func TestBinaryShipsCalendars(t *testing.T) {
	t.Parallel()
	bin := schedulerBinary(t)
	out, err := exec.Command(bin, "calendar", "check", "builtin:uk-england", "--year", "2022").CombinedOutput()
	want := `2022-12-27 Tue  holiday "Christmas Day" (fixed 12-25, substitute next_free_weekday), substitute for Sunday 2022-12-25`
	if err != nil || !strings.Contains(string(out), want+"\n") {
		t.Fatalf("calendar check builtin:uk-england --year 2022: %v\n%s\nwant a line %s", err, out, want)
	}
}
