package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// stored reads a schedule's spec as the API stored it.
func (e *env) stored(id string) kvstore.Spec {
	e.t.Helper()
	entry, err := e.store.GetSpec(context.Background(), id)
	if err != nil {
		e.t.Fatalf("get %s: %v", id, err)
	}
	return entry.Spec
}

// compiled compiles a stored spec as the scheduler does.
func (e *env) compiled(id string) compile.Compiled {
	e.t.Helper()
	c, err := compile.Compile(e.stored(id), id, e.store.CalendarSource(context.Background()), nil)
	if err != nil {
		e.t.Fatalf("compile %s: %v", id, err)
	}
	return c
}

// slotLines writes a compiled schedule's next n slots after from as
// preview prints them.
func slotLines(c compile.Compiled, from time.Time, n int) string {
	var b strings.Builder
	for t := from; n > 0; n-- {
		if t = c.Schedule.Next(t); t.IsZero() {
			break
		}
		b.WriteString(t.In(c.Location).Format(time.RFC3339Nano) + "\n")
	}
	return b.String()
}

// TestScheduleAddDurationGrammar: --every takes the one duration grammar
// of the spec, @every and wakeup --when (issue 13, item 2); an error names
// the flag and the token.
func TestScheduleAddDurationGrammar(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i, c := range []struct {
		every string
		want  time.Duration
	}{
		{"3600000", time.Hour}, {"1 h", time.Hour}, {"2 hours", 2 * time.Hour}, {"1 day", 24 * time.Hour},
		{"90 minutes", 90 * time.Minute}, {"1d12h", 36 * time.Hour}, {"1 d 3 h", 27 * time.Hour}, {"1 day 3 hours", 27 * time.Hour},
	} {
		id := fmt.Sprintf("d%d", i)
		if code, _, errOut := e.run("schedule", "add", "--id", id, "--workflow", "wf", "--every", c.every); code != ExitOK {
			t.Fatalf("--every %q: exit %d: %s", c.every, code, errOut)
		}
		s := e.stored(id)
		if d, err := cronx.ParseEvery(s.Every); err != nil || d != c.want {
			t.Errorf("--every %q stored %q = %v, %v; want %v", c.every, s.Every, d, err, c.want)
		}
		// Consecutive slots are the interval apart.
		slots := e.compiled(id).Schedule
		first := slots.Next(time.Now())
		if gap := slots.Next(first).Sub(first); gap != c.want {
			t.Errorf("--every %q: slots %v apart", c.every, gap)
		}
	}
	for _, c := range []struct{ every, token string }{
		{"1 parsec", `"parsec"`}, {"1h 30", `"30"`}, {"soon", `"soon"`}, {"50", "at least 100ms"},
	} {
		code, _, errOut := e.run("schedule", "add", "--id", "bad", "--workflow", "wf", "--every", c.every)
		if code != ExitInvalid || !strings.HasPrefix(errOut, "scheduler: --every: ") || !strings.Contains(errOut, c.token) {
			t.Errorf("--every %q: exit %d, stderr %q; want exit 2 naming --every and %s", c.every, code, errOut, c.token)
		}
	}
	// wakeup --when reads the same grammar, checked before connecting.
	code, out, errOut := e.run("wakeup", "add", "--run", "r", "--step", "s", "--workflow", "wf", "--when", "2 hours", "--json")
	var added struct {
		Timer kvstore.Timer `json:"timer"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &added) != nil {
		t.Fatalf("wakeup --when '2 hours': exit %d: %s %s", code, out, errOut)
	}
	if in := time.Until(added.Timer.Due); in < 2*time.Hour-time.Minute || in > 2*time.Hour {
		t.Errorf("wakeup --when '2 hours' is due in %v", in)
	}
	var bad strings.Builder
	if code := Main(context.Background(), []string{"wakeup", "add", "--run", "r", "--step", "s", "--workflow", "wf", "--when", "2 parsecs",
		"--nats-url", "nats://127.0.0.1:1"}, &bad, &bad); code != ExitInvalid || !strings.Contains(bad.String(), `--when: when "2 parsecs": unknown unit "parsecs"`) {
		t.Errorf("wakeup --when '2 parsecs': exit %d: %s", code, bad.String())
	}
}

// TestScheduleAddAnchors: --every counts from the first registration by
// default, and registering again keeps that anchor; whole days follow
// --tz's wall clock; --anchor epoch, epoch+PHASE and RFC 3339 choose the
// other readings; --daily-at is the cron it stands for (issue 13, item 3).
func TestScheduleAddAnchors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	paris, err := cronx.LoadZone("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	add := func(id string, flags ...string) {
		t.Helper()
		if code, _, errOut := e.run(append([]string{"schedule", "add", "--id", id, "--workflow", "wf"}, flags...)...); code != ExitOK {
			t.Fatalf("add %s %v: exit %d: %s", id, flags, code, errOut)
		}
	}

	before := time.Now().Truncate(time.Second)
	add("weekly", "--every", "7d", "--tz", "Europe/Paris")
	s := e.stored("weekly")
	if s.Align != kvstore.AlignAnchor || s.Anchor == nil || s.Anchor.Before(before) || s.Anchor.After(time.Now()) {
		t.Fatalf("stored %+v, want the first registration as anchor", s)
	}
	anchor := s.Anchor.In(paris)
	c := e.compiled("weekly")
	for at, i := time.Now(), 0; i < 5; i++ {
		at = c.Schedule.Next(at)
		l := at.In(paris)
		if l.Weekday() != anchor.Weekday() || l.Hour() != anchor.Hour() || l.Minute() != anchor.Minute() || l.Second() != anchor.Second() {
			t.Fatalf("slot %v, want %s at %s in Paris (the registration)", l, anchor.Weekday(), anchor.Format("15:04:05"))
		}
	}
	rev := revisionOf(t, e, "weekly")
	add("weekly", "--every", "7d", "--tz", "Europe/Paris") // a service registering at its next start
	if again := e.stored("weekly"); !again.Anchor.Equal(*s.Anchor) || revisionOf(t, e, "weekly") != rev {
		t.Fatalf("re-registration moved the anchor from %v to %v", s.Anchor, again.Anchor)
	}

	add("monday", "--every", "7d", "--tz", "Europe/Paris", "--anchor", "2026-03-02T09:00:00+01:00")
	c = e.compiled("monday")
	got := slotLines(c, testtime(t, "2026-03-20T00:00:00Z"), 3)
	if want := "2026-03-23T09:00:00+01:00\n2026-03-30T09:00:00+02:00\n2026-04-06T09:00:00+02:00\n"; got != want {
		t.Errorf("--anchor RFC 3339: slots\n%swant\n%s", got, want)
	}
	add("aligned", "--every", "7d", "--tz", "Europe/Paris", "--anchor", "epoch")
	if s := e.stored("aligned"); s.Align != kvstore.AlignEpoch || s.Anchor != nil {
		t.Errorf("--anchor epoch stored %+v", s)
	}
	add("nine", "--every", "1 day", "--tz", "Europe/Paris", "--anchor", "epoch+9h")
	got = slotLines(e.compiled("nine"), testtime(t, "2026-03-28T12:00:00+01:00"), 2)
	if want := "2026-03-29T09:00:00+02:00\n2026-03-30T09:00:00+02:00\n"; got != want {
		t.Errorf("--anchor epoch+9h: slots\n%swant\n%s", got, want)
	}
	add("standup", "--daily-at", "09:30", "--tz", "Europe/Paris")
	if s := e.stored("standup"); s.Cron != "30 9 * * *" || s.TZ != "Europe/Paris" {
		t.Errorf("--daily-at 09:30 stored cron %q tz %q", s.Cron, s.TZ)
	}
	add("tick", "--daily-at", "23:59:30")
	if s := e.stored("tick"); s.Cron != "30 59 23 * * *" {
		t.Errorf("--daily-at 23:59:30 stored cron %q", s.Cron)
	}

	for _, c := range []struct {
		flags []string
		flag  string
	}{
		{[]string{"--every", "1h", "--anchor", "yesterday"}, "--anchor"},
		{[]string{"--cron", "* * * * *", "--anchor", "epoch"}, "--anchor"},
		{[]string{"--every", "1h", "--anchor", "epoch+soon"}, "--anchor"},
		{[]string{"--daily-at", "25:00"}, "--daily-at"},
		{[]string{"--daily-at", "09:00", "--cron", "0 9 * * *"}, "--daily-at"},
	} {
		code, _, errOut := e.run(append([]string{"schedule", "add", "--id", "bad", "--workflow", "wf"}, c.flags...)...)
		if code != ExitInvalid || !strings.HasPrefix(errOut, "scheduler: "+c.flag) {
			t.Errorf("%v: exit %d: %q; want exit 2 naming %s", c.flags, code, errOut, c.flag)
		}
	}
}

// revisionOf is the stored revision of a schedule.
func revisionOf(t *testing.T, e *env, id string) uint64 {
	t.Helper()
	entry, err := e.store.GetSpec(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return entry.Revision
}

// testtime parses an RFC 3339 instant or fails the test.
func testtime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestScheduleAddCalendarFile: --calendar FILE.json stores the calendar in
// the spec, as preview reads it; a calendar of holidays only skips its
// holidays and fires on weekends (issue 13, item 4).
func TestScheduleAddCalendarFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := writeFile(t, "us.json", usCalendar)
	if code, _, errOut := e.run("schedule", "add", "--id", "daily", "--workflow", "wf", "--daily-at", "10:00",
		"--tz", "America/New_York", "--calendar", file); code != ExitOK {
		t.Fatalf("add --calendar FILE: exit %d: %s", code, errOut)
	}
	s := e.stored("daily")
	if s.Calendar != "" || len(s.CalendarInline) == 0 {
		t.Fatalf("stored calendar %q inline %s, want the file inline", s.Calendar, s.CalendarInline)
	}
	cal, err := calendar.Parse(s.CalendarInline)
	if err != nil {
		t.Fatal(err)
	}
	if canon, _ := cal.MarshalJSON(); string(canon) != string(s.CalendarInline) {
		t.Errorf("stored %s, want the canonical form %s", s.CalendarInline, canon)
	}
	got := slotLines(e.compiled("daily"), testtime(t, "2026-12-23T12:00:00-05:00"), 4)
	want := "2026-12-24T10:00:00-05:00\n2026-12-26T10:00:00-05:00\n2026-12-27T10:00:00-05:00\n2026-12-28T10:00:00-05:00\n"
	if got != want {
		t.Errorf("holidays only: slots\n%swant (Christmas skipped, the weekend fires)\n%s", got, want)
	}
	bad := writeFile(t, "bad.json", `{"zone":"America/New_York","holidays":[{"name":"x","date":"13-01"}]}`)
	for _, ref := range []string{bad, "/does/not/exist.json"} {
		code, _, errOut := e.run("schedule", "add", "--id", "x", "--workflow", "wf", "--cron", "0 9 * * *", "--calendar", ref)
		if code != ExitInvalid || !strings.HasPrefix(errOut, "scheduler: --calendar: ") {
			t.Errorf("--calendar %s: exit %d: %s", ref, code, errOut)
		}
	}
	// "-" reads the calendar from standard input.
	var spec kvstore.Spec
	if err := applyCalendar(&spec, "-", strings.NewReader(usCalendar)); err != nil || len(spec.CalendarInline) == 0 {
		t.Errorf("--calendar -: %v, inline %s", err, spec.CalendarInline)
	}
}

// TestPreviewParity builds schedule add and preview from one flag set and
// compares preview's output with the next 50 slots of the spec the API
// stored, compiled as the scheduler compiles it (issue 13, item 5).
func TestPreviewParity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := writeFile(t, "us.json", usCalendar)
	if code, _, errOut := e.run("calendar", "put", "us", file); code != ExitOK {
		t.Fatalf("calendar put: %s", errOut)
	}
	soon := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	flagSets := [][]string{
		{"--cron", "0 9 * * 1-5", "--tz", "America/New_York", "--calendar", "us", "--holiday-roll", "previous_business_day"},
		{"--every", "7d", "--tz", "Europe/Paris"},
		{"--every", "1 day 3 hours", "--tz", "Europe/Paris", "--anchor", "2026-03-02T09:00:00+01:00"},
		{"--every", "1d", "--tz", "Europe/Paris", "--anchor", "epoch+9h"},
		{"--every", "3600000", "--anchor", "epoch"},
		{"--every", "90 minutes", "--start", soon.Format(time.RFC3339), "--limit", "20"},
		{"--every", "2h", "--end", soon.Add(30 * time.Hour).Format(time.RFC3339)},
		{"--daily-at", "06:00", "--tz", "Europe/Paris", "--business-hours-only"},
		{"--daily-at", "02:00", "--tz", "America/New_York", "--calendar", file, "--holiday-roll", "next_business_day", "--business-hours-only"},
		{"--business-day", "-1", "--time", "17:00", "--calendar", file},
		{"--business-day", "2", "--time", "10:00", "--tz", "Europe/London"},
		{"--cron", "30 2 * * *", "--tz", "America/New_York", "--dst-gap", "shift", "--dst-overlap", "twice"},
		{"--cron", "0 0 12 ? * 6#3", "--dialect", "quartz"},
		{"--cron", "0 0 */10 * SUN", "--dom-dow", "posix"},
		{"--cron", "H H * * *", "--tz", "Asia/Tokyo"},
		{"--at", soon.Add(48 * time.Hour).Format(time.RFC3339), "--tz", "Asia/Tokyo"},
	}
	for i, flags := range flagSets {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			id := fmt.Sprintf("parity-%d", i)
			if code, _, errOut := e.run(append([]string{"schedule", "add", "--id", id, "--workflow", "wf"}, flags...)...); code != ExitOK {
				t.Fatalf("schedule add: exit %d: %s", code, errOut)
			}
			// Preview from the registration: the stored anchor, or now.
			from := time.Now().UTC().Truncate(time.Second)
			if s := e.stored(id); s.Anchor != nil {
				from = *s.Anchor
			}
			want := slotLines(e.compiled(id), from, 50)
			if want == "" {
				t.Fatal("the schedule has no slots: nothing compared")
			}
			code, got, errOut := e.run(append([]string{"preview", "--key", id, "--from", from.Format(time.RFC3339Nano), "-n", "50"}, flags...)...)
			if code != ExitOK || got != want {
				t.Fatalf("preview: exit %d %s\n%s\nthe stored schedule fires:\n%s", code, errOut, got, want)
			}
		})
	}
}
