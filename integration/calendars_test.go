package integration

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/testwait"
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

// TestEngineOnShippedCalendar: a running scheduler plans a schedule on a
// shipped calendar with no record in the calendars bucket: England's
// Christmas 2027 (Saturday) and Boxing Day (Sunday) are substituted on
// Monday 27 and Tuesday 28, which a daily 09:00 fire skips.
func TestEngineOnShippedCalendar(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, daemon.Config{})
	run := cliRunner(d)
	must := mustRun(t, run)
	must("schedule", "add", "--id", "ldn", "--workflow", "wf", "--cron", "0 9 * * *", "--calendar", "builtin:uk-england",
		"--start", "2027-12-23T00:00:00Z")
	var desc admin.Description
	testwait.Eventually(t, 10*time.Second, "the schedule on builtin:uk-england planned", func() bool {
		if err := json.Unmarshal([]byte(must("schedule", "describe", "ldn", "--json", "--next", "3")), &desc); err != nil {
			t.Fatal(err)
		}
		return desc.Status == admin.StatePlanned
	})
	var days []string
	for _, f := range desc.Next {
		if f.Skip == "" {
			days = append(days, f.At.In(time.UTC).Format(time.DateOnly))
		}
	}
	if want := []string{"2027-12-23", "2027-12-24", "2027-12-29"}; !slices.Equal(days, want) {
		t.Fatalf("next fires on builtin:uk-england: %v, want %v (%+v)", days, want, desc.Next)
	}
	if code, _, errOut := run("calendar", "get", "builtin:uk-england"); code != cli.ExitOK {
		t.Fatalf("calendar get builtin:uk-england: exit %d: %s", code, errOut)
	}
}
