package console_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestPagesReadWithoutJavaScript: every page is complete HTML from the
// server alone: the list, a schedule (spec, next fires explained, month,
// ledger), timers, calendars with the year grid, the fleet.
func TestPagesReadWithoutJavaScript(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	e.cli("calendar", "put", "us", e.file("us.json", usCalendar))
	e.cli("schedule", "add", "--id", "payroll", "--workflow", "pay", "--cron", "0 9 25 * *", "--tz", "America/New_York", "--calendar", "us")
	e.cli("wakeup", "add", "--run", "order-7", "--step", "escalate", "--workflow", "approvals", "--when", "2h", "--condition", "awaiting")

	list := e.waitPage(viewerToken, "/schedules", "schedules", 10*time.Second, func(p string) bool { return strings.Contains(p, `data-id="payroll"`) })
	for _, want := range []string{"at 09:00 on the 25th of the month", "<code>0 9 25 * *</code>", "America/New_York", `title="`, "planned"} {
		if !strings.Contains(list, want) {
			t.Errorf("schedule list lacks %q", want)
		}
	}
	// Next year's Christmas, a holiday of "us": its fire is skipped, the
	// month view marks the day, and the next 20 (monthly) fires say why.
	year := time.Now().Year() + 1
	xmas := fmt.Sprintf("%d-12-25", year)
	code, page := e.get(viewerToken, fmt.Sprintf("/schedules/payroll?month=%d-12", year))
	if code != http.StatusOK {
		t.Fatalf("schedule page: %d\n%s", code, page)
	}
	for _, want := range []string{"Next 20 fires", fmt.Sprintf("December %d", year), `class="skipped holiday" title="` + xmas + `: holiday: Christmas Day`,
		"skipped " + xmas + " 09:00 EST: holiday &#34;Christmas Day&#34;", "Ledger"} {
		if !strings.Contains(page, want) {
			t.Errorf("schedule page lacks %q", want)
		}
	}
	code, page = e.get(viewerToken, fmt.Sprintf("/calendars/us?year=%d", year))
	if code != http.StatusOK || !strings.Contains(page, `class="holiday" data-date="`+xmas+`" title="`+xmas+`: holiday &#34;Christmas Day&#34;`) {
		t.Errorf("calendar page: %d, no holiday mark on 2026-12-25:\n%s", code, page)
	}
	if !strings.Contains(page, "Thanksgiving</strong>") || !strings.Contains(page, "4th Thursday of November") {
		t.Errorf("calendar page lacks Thanksgiving's rule")
	}
	code, page = e.get(viewerToken, "/timers")
	if code != http.StatusOK || !strings.Contains(page, "order-7") || !strings.Contains(page, "awaiting") || !strings.Contains(page, "<h2>approvals</h2>") {
		t.Errorf("timers page: %d:\n%s", code, page)
	}
	// A timer record written straight into the bucket that does not
	// decode is listed as invalid, with its key and why, not left out.
	nc, err := nats.Connect(e.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), "sched_wakeups")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), "junk.s", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	e.waitPage(viewerToken, "/timers", "timers", 10*time.Second, func(p string) bool {
		return strings.Contains(p, `<span class="status s-invalid">invalid</span> <small>key <code>junk.s</code>`)
	})
	code, page = e.get(viewerToken, "/fleet")
	if code != http.StatusOK || !strings.Contains(page, "Instances") || !strings.Contains(page, "jetsched_fire_lateness_seconds") || !strings.Contains(page, "1 schedules") {
		t.Errorf("fleet page: %d:\n%s", code, page)
	}
	if code, page = e.get(viewerToken, "/schedules/nope"); code != http.StatusNotFound || !strings.Contains(page, `There is no schedule &#34;nope&#34;`) {
		t.Errorf("unknown schedule: %d", code)
	}
}

// TestListSortedByNextFireAndPaged: the list is in next-fire order across
// pages, filters by workflow, state and text, and pages with a cursor.
func TestListSortedByNextFireAndPaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{PageSize: 2})
	base := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	// Ids in the reverse of their fire order.
	order := []string{"e-first", "d-second", "c-third", "b-fourth", "a-fifth"}
	for i, id := range order {
		wf := "even"
		if i%2 == 1 {
			wf = "odd"
		}
		e.cli("schedule", "add", "--id", id, "--workflow", wf, "--at", base.Add(time.Duration(i)*time.Hour).Format(time.RFC3339))
	}
	ids := func(page string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`data-id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			out = append(out, m[1])
		}
		return out
	}
	page := e.waitPage(operatorToken, "/schedules", "schedules", 10*time.Second, func(p string) bool { return strings.Contains(p, "5 matching") })
	var seen []string
	for path := "/schedules"; ; {
		_, page = e.get(operatorToken, path)
		seen = append(seen, ids(page)...)
		m := regexp.MustCompile(`href="(/schedules\?after=[^"]+)" rel="next"`).FindStringSubmatch(page)
		if m == nil {
			break
		}
		path = strings.ReplaceAll(m[1], "&amp;", "&")
	}
	if strings.Join(seen, " ") != strings.Join(order, " ") {
		t.Fatalf("pages list %v, want next-fire order %v", seen, order)
	}
	if _, page = e.get(operatorToken, "/schedules?workflow=odd"); strings.Join(ids(page), " ") != "d-second b-fourth" {
		t.Errorf("workflow filter: %v", ids(page))
	}
	if _, page = e.get(operatorToken, "/schedules?q=THIRD"); strings.Join(ids(page), " ") != "c-third" {
		t.Errorf("text filter: %v", ids(page))
	}
	if _, page = e.get(operatorToken, "/schedules?state=paused"); len(ids(page)) != 0 || !strings.Contains(page, "0 matching") {
		t.Errorf("state filter: %v", ids(page))
	}
	if code, _ := e.get(operatorToken, "/schedules?state=bogus"); code != http.StatusBadRequest {
		t.Errorf("a bad state filter: %d, want 400", code)
	}
	if code, _ := e.get(operatorToken, "/schedules?after=garbage"); code != http.StatusBadRequest {
		t.Errorf("a bad cursor: %d, want 400", code)
	}
}

// TestActionsNeedAnOperatorAndATokenFromTheForm: a viewer, a form without
// the CSRF token, a cross-site post and a read-only console are refused,
// and nothing changes; an operator's pause goes through the admin API and
// the audit trail names the console user.
func TestActionsNeedAnOperatorAndATokenFromTheForm(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	e.cli("schedule", "add", "--id", "job", "--workflow", "wf", "--every", "1h")
	_, page := e.get(operatorToken, "/schedules/job")
	token := csrf(t, page)
	if _, viewerPage := e.get(viewerToken, "/schedules/job"); strings.Contains(viewerPage, `action="/schedules/job/pause"`) {
		t.Errorf("a viewer is shown the pause form")
	}
	form := url.Values{"note": {"nightly migration"}, "until": {"2h"}, "csrf": {token}}
	for _, c := range []struct {
		name    string
		token   string
		form    url.Values
		headers []string
	}{
		{"viewer", viewerToken, form, nil},
		{"no CSRF token", operatorToken, url.Values{"note": {"x"}}, nil},
		{"someone else's CSRF token", operatorToken, url.Values{"csrf": {"forged"}}, nil},
		{"cross-site", operatorToken, form, []string{"Sec-Fetch-Site", "cross-site"}},
		{"nobody", "", form, nil},
	} {
		if code, _ := e.post(c.token, "/schedules/job/pause", c.form, c.headers...); code != http.StatusForbidden && code != http.StatusUnauthorized {
			t.Errorf("%s: pause answered %d, want 403 or 401", c.name, code)
		}
	}
	if p := e.paused("job"); p != nil {
		t.Fatalf("a refused pause paused the schedule: %+v", p)
	}
	code, body := e.post(operatorToken, "/schedules/job/pause", form)
	if code != http.StatusSeeOther {
		t.Fatalf("operator's pause: %d\n%s", code, body)
	}
	p := e.paused("job")
	if p == nil || p.Note != "nightly migration" || time.Until(p.Until) < time.Hour {
		t.Fatalf("after the operator's pause, the CLI shows %+v", p)
	}
	entry := e.auditEntry("schedule.pause", "job")
	if !strings.Contains(entry["actor"].(string)+" "+stringOf(entry["claimed_actor"]), "console:alice") {
		t.Errorf("the audit entry does not name console:alice: %v", entry)
	}
	// Bad input is refused naming the field, and nothing is written.
	if code, body := e.post(operatorToken, "/schedules/job/skip", url.Values{"csrf": {token}, "count": {"many"}}); code != http.StatusBadRequest || !strings.Contains(body, "count: want a whole number") {
		t.Errorf("skip with a bad count: %d", code)
	}
	if code, body := e.post(operatorToken, "/schedules/job/remove", url.Values{"csrf": {token}, "confirm": {"other"}}); code != http.StatusBadRequest || !strings.Contains(body, "type the schedule&#39;s id") {
		t.Errorf("remove without confirmation: %d", code)
	}
	if code, _ := e.post(operatorToken, "/schedules/job/resume", url.Values{"csrf": {token}}); code != http.StatusSeeOther || e.paused("job") != nil {
		t.Errorf("resume: %d, paused %v", code, e.paused("job"))
	}
	if code, _ := e.post(operatorToken, "/schedules/job/remove", url.Values{"csrf": {token}, "confirm": {"job"}}); code != http.StatusSeeOther {
		t.Errorf("remove: %d", code)
	}
	if code, _ := e.get(operatorToken, "/schedules/job"); code != http.StatusNotFound {
		t.Errorf("the removed schedule's page: %d, want 404", code)
	}
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

// TestReadOnlyShowsNoActionAndRefusesThem.
func TestReadOnlyShowsNoActionAndRefusesThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{ReadOnly: true})
	e.cli("schedule", "add", "--id", "job", "--workflow", "wf", "--every", "1h")
	_, page := e.get(operatorToken, "/schedules/job")
	if strings.Contains(page, `name="csrf"`) || !strings.Contains(page, "read-only") {
		t.Errorf("a read-only console shows actions")
	}
	if code, body := e.post(operatorToken, "/schedules/job/trigger", url.Values{}); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("trigger on a read-only console: %d", code)
	}
	if code, _ := e.post(operatorToken, "/timers/cancel", url.Values{"run": {"r"}}); code != http.StatusForbidden {
		t.Errorf("timer cancel on a read-only console: %d", code)
	}
}

// TestLiveEventOnNewSchedule: the schedules topic announces a schedule
// added with the CLI, and the list then shows it.
func TestLiveEventOnNewSchedule(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	e.cli("schedule", "add", "--id", "first", "--workflow", "wf", "--every", "1h")
	e.waitPage(viewerToken, "/schedules", "schedules", 10*time.Second, func(p string) bool { return strings.Contains(p, `data-id="first"`) })
	events, stop := e.subscribe(viewerToken, "schedules")
	defer stop()
	e.cli("schedule", "add", "--id", "second", "--workflow", "wf", "--every", "2h")
	testwait.Receive(t, 10*time.Second, "a live event after schedule add", events)
	e.waitPage(viewerToken, "/schedules", "schedules", 10*time.Second, func(p string) bool {
		return strings.Contains(p, `data-id="second"`) && strings.Contains(p, "2 matching")
	})
	if code, _ := e.get(viewerToken, "/events?topic=nonsense"); code != http.StatusBadRequest {
		t.Errorf("an unknown topic: %d, want 400", code)
	}
}

// TestListenBeyondLoopbackNeedsAuth: the console refuses a non-loopback
// address without --auth, and reads the auth files before it connects.
func TestListenBeyondLoopbackNeedsAuth(t *testing.T) {
	for _, c := range []struct {
		cfg  console.Config
		want string
	}{
		{console.Config{Listen: "0.0.0.0:8090"}, "needs --auth"},
		{console.Config{Listen: ":8090"}, "needs --auth"},
		{console.Config{Listen: "192.0.2.1:8090"}, "needs --auth"},
		{console.Config{Listen: "0.0.0.0:8090", Auth: console.Auth{Mode: console.AuthProxy, Header: "X-User"}}, "--trusted-proxies"},
		{console.Config{Listen: "0.0.0.0:8090", Auth: console.Auth{Mode: console.AuthBasic, File: "/nonexistent"}}, "no such file"},
		{console.Config{Listen: "127.0.0.1:8090", TLSCert: "c.pem"}, "--https-key"},
	} {
		err := c.cfg.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.cfg, err, c.want)
		}
		if strings.Contains(c.want, "--auth") && !errors.Is(err, console.ErrNeedsAuth) {
			t.Errorf("%+v: %v is not ErrNeedsAuth", c.cfg, err)
		}
	}
	for _, ok := range []string{"127.0.0.1:8090", "[::1]:8090", "localhost:0"} {
		if err := (console.Config{Listen: ok}).Check(); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	_, err := console.Start(context.Background(), console.Config{Listen: "0.0.0.0:0"})
	if err == nil {
		t.Fatal("Start without a connection worked")
	}
}

// TestScheduleAccounting (issue 51): the schedule page's Accounting
// section shows the summary line of the ledger's retention and lists the
// slots that did not fire, with the ledger's reason: a one-shot that
// fired, and one whose slot an operator skipped.
func TestScheduleAccounting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	at := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(time.Second).UTC()
	e.cli("schedule", "add", "--id", "fired-once", "--workflow", "wf", "--at", at.Format(time.RFC3339))
	e.cli("schedule", "add", "--id", "skipped-once", "--workflow", "wf", "--at", at.Format(time.RFC3339))
	e.cli("schedule", "skip", "skipped-once")
	pageOf := func(id, line string) string {
		var page string
		testwait.Eventually(t, 20*time.Second, id+"'s accounting "+line, func() bool {
			_, page = e.get(viewerToken, "/schedules/"+id)
			return strings.Contains(page, `<p id="acc-line"><strong>`+line+`</strong></p>`)
		})
		return page
	}
	page := pageOf("fired-once", "owed 1, fired 1, not fired with reason 0, pending 0, unaccounted 0")
	if !strings.Contains(page, `<h2 id="acc-h">Accounting</h2>`) || !strings.Contains(page, "Every slot owed in the range fired") {
		t.Errorf("fired-once: the accounting section lacks its heading or its note:\n%s", page)
	}
	page = pageOf("skipped-once", "owed 1, fired 0, not fired with reason 1, pending 0, unaccounted 0")
	if !strings.Contains(page, `<span class="status f-not_fired">not_fired</span> <small>(skipped)</small>`) || !strings.Contains(page, "skipped by an operator") ||
		!strings.Contains(page, "1 slot(s) not fired in the range") {
		t.Errorf("skipped-once: the accounting section does not list the skipped slot with its reason:\n%s", page)
	}
	if code, page := e.get(viewerToken, "/schedules/skipped-once?acursor=garbage"); code != http.StatusOK || !strings.Contains(page, "cursor: invalid cursor") {
		t.Errorf("a bad accounting cursor: %d, want the page with the API's refusal:\n%s", code, page)
	}
}
