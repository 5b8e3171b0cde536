package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// screenshotsEnv names the directory the browser test writes the
// screenshots of docs/console.md to (unset: none).
const screenshotsEnv = "JETSCHED_CONSOLE_SCREENSHOTS"

// browser starts headless Chromium (the Debian package; CI installs it)
// with a fresh profile and the extra options, for the life of the test.
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is not installed (apt-get install -y chromium): %v", err)
		}
		t.Skipf("chromium is not installed (apt-get install -y chromium): %v", err)
	}
	opts := append([]chromedp.ExecAllocatorOption{},
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("user-data-dir", t.TempDir()), chromedp.Flag("window-size", "1280,900"))
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	ctx, cancelRun := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() {
		cancelRun()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

// run runs browser actions and fails the test on an error.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page (awaiting a promise).
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// TestBrowser drives the console in headless Chromium: a schedule added
// with the CLI shows in the open list within a second (SSE), pausing from
// the page pauses it (the CLI sees it) and the audit trail names the
// console user, the calendar marks a holiday, and a viewer cannot act.
func TestBrowser(t *testing.T) {
	e := newEnv(t, console.Config{})
	ctx := browser(t)
	e.cli("calendar", "put", "us", e.file("us.json", usCalendar))
	e.cli("schedule", "add", "--id", "payroll", "--workflow", "pay", "--cron", "0 9 25 * *", "--tz", "America/New_York", "--calendar", "us", "--holiday-roll", "previous_business_day")

	// The operator signs in with a token and lands on the live list.
	run(t, ctx, "sign in",
		chromedp.Navigate(e.web+"/login?next=/schedules"),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), operatorToken),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-id="payroll"]`)))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live").textContent === "live"`)); err != nil {
		t.Fatalf("browser: the live stream does not open: %v", err)
	}

	// A schedule added with the CLI appears without a reload.
	e.cli("schedule", "add", "--id", "sse-new", "--workflow", "wf", "--every", "1h")
	added := time.Now()
	wait, cancel := context.WithTimeout(ctx, time.Second)
	err := chromedp.Do(wait, chromedp.WaitVisible(chromedp.CSS(`tr[data-id="sse-new"]`)))
	cancel()
	if err != nil {
		t.Fatalf("the new schedule is not in the open list within a second of schedule add: %v", err)
	}
	t.Logf("the list showed the new schedule %s after schedule add returned", time.Since(added).Round(time.Millisecond))

	// Pausing from the schedule's page pauses it.
	run(t, ctx, "pause",
		chromedp.Navigate(e.web+"/schedules/payroll"),
		chromedp.SendKeys(chromedp.CSS(`#pause-note`), "quarter close"),
		chromedp.Click(chromedp.CSS(`#pause`)),
		chromedp.WaitVisible(chromedp.CSS(`.banner.ok`)),
		chromedp.WaitVisible(chromedp.CSS(`#resume`)))
	if p := e.paused("payroll"); p == nil || p.Note != "quarter close" {
		t.Fatalf("after pausing in the browser, the CLI shows pause %+v", p)
	}
	entry := e.auditEntry("schedule.pause", "payroll")
	if who := stringOf(entry["actor"]) + " " + stringOf(entry["claimed_actor"]); !strings.Contains(who, "console:alice") {
		t.Errorf("the audit entry of the pause names %q, not console:alice", who)
	}

	// Editing a field from the page: the preview lists the change and
	// writes nothing; applying writes that field only.
	specOf := func() kvstore.Spec {
		t.Helper()
		var v struct {
			Spec kvstore.Spec `json:"spec"`
		}
		if err := json.Unmarshal([]byte(e.cli("schedule", "get", "payroll", "--json")), &v); err != nil {
			t.Fatal(err)
		}
		return v.Spec
	}
	run(t, ctx, "edit preview",
		chromedp.Navigate(e.web+"/schedules/payroll"),
		chromedp.SetValue(chromedp.CSS(`#edit input[name="cron"]`), "0 10 25 * *"),
		chromedp.Click(chromedp.CSS(`#edit-preview-btn`)),
		chromedp.WaitVisible(chromedp.CSS(`#edit-preview`)))
	if txt := eval[string](t, ctx, `document.getElementById("edit-preview").textContent`); !strings.Contains(txt, "0 9 25 * *") || !strings.Contains(txt, "0 10 25 * *") || strings.Contains(txt, "tz") {
		t.Errorf("the edit preview says %q", txt)
	}
	if got := specOf(); got.Cron != "0 9 25 * *" {
		t.Fatalf("the preview wrote: cron %q", got.Cron)
	}
	run(t, ctx, "edit apply",
		chromedp.Click(chromedp.CSS(`#edit-apply`)),
		chromedp.WaitVisible(chromedp.CSS(`.banner.ok`)))
	if got := specOf(); got.Cron != "0 10 25 * *" || got.TZ != "America/New_York" || got.Calendar != "us" || got.HolidayRoll != "previous_business_day" {
		t.Fatalf("after applying the edit: %+v", got)
	}

	// The calendar's year grid marks next year's Christmas, and so does
	// the schedule's month view.
	year := time.Now().Year() + 1
	xmas := fmt.Sprintf(`td[data-date="%d-12-25"]`, year)
	run(t, ctx, "calendar", chromedp.Navigate(fmt.Sprintf("%s/calendars/us?year=%d", e.web, year)), chromedp.WaitVisible(chromedp.CSS(xmas)))
	if cls := eval[string](t, ctx, `document.querySelector('`+xmas+`').className`); cls != "holiday" {
		t.Errorf("the calendar's %d-12-25 cell has class %q, want holiday", year, cls)
	}
	if title := eval[string](t, ctx, `document.querySelector('`+xmas+`').title`); !strings.Contains(title, "Christmas Day") {
		t.Errorf("the calendar's %d-12-25 cell says %q", year, title)
	}
	run(t, ctx, "month view", chromedp.Navigate(fmt.Sprintf("%s/schedules/payroll?month=%d-12", e.web, year)), chromedp.WaitVisible(chromedp.CSS(xmas)))
	if cls := eval[string](t, ctx, `document.querySelector('`+xmas+`').className`); !strings.Contains(cls, "holiday") {
		t.Errorf("the month view's %d-12-25 cell has class %q, want holiday", year, cls)
	}

	if dir := os.Getenv(screenshotsEnv); dir != "" {
		screenshots(t, ctx, e, dir)
	}

	// A viewer sees no action, and a forged request is refused.
	run(t, ctx, "sign in as a viewer",
		chromedp.Navigate(e.web+"/schedules"),
		chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="token"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), viewerToken),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-id="payroll"]`)),
		chromedp.Navigate(e.web+"/schedules/payroll"),
		chromedp.WaitVisible(chromedp.CSS(`#state`)))
	if forms := eval[int](t, ctx, `document.querySelectorAll('form[method="post"]:not([action="/logout"])').length`); forms != 0 {
		t.Errorf("a viewer is shown %d action forms", forms)
	}
	status := eval[int](t, ctx, `fetch("/schedules/payroll/resume", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "csrf=x"}).then(r => r.status)`)
	if status != 403 {
		t.Errorf("a viewer's resume answered %d, want 403", status)
	}
	if e.paused("payroll") == nil {
		t.Error("a viewer's resume resumed the schedule")
	}
}

// screenshots writes the pages of docs/console.md: each page at 1280 px,
// and the list and a schedule at a phone's 390 px.
func screenshots(t *testing.T, ctx context.Context, e *env, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	e.cli("schedule", "add", "--id", "nightly-report", "--workflow", "reports", "--cron", "0 2 * * *", "--tz", "Europe/Paris")
	e.cli("schedule", "add", "--id", "heartbeat", "--workflow", "ping", "--every", "5s")
	e.cli("schedule", "add", "--id", "invoices-weekdays", "--workflow", "billing", "--cron", "30 8 * * 1-5", "--tz", "America/New_York", "--calendar", "us")
	e.cli("schedule", "add", "--id", "launch", "--workflow", "marketing", "--at", now.Add(72*time.Hour).Truncate(time.Hour).Format(time.RFC3339))
	e.cli("schedule", "backfill", "nightly-report", "--from", now.Add(-10*24*time.Hour).Format(time.RFC3339), "--to", now.Format(time.RFC3339), "--rate", "0.2")
	for _, w := range [][]string{{"order-42", "escalate", "approvals", "48h"}, {"order-42", "remind", "approvals", "24h"}, {"order-43", "escalate", "approvals", "47h"}, {"invoice-9", "dunning", "billing", "72h"}} {
		e.cli("wakeup", "add", "--run", w[0], "--step", w[1], "--workflow", w[2], "--when", w[3], "--condition", "awaiting_"+w[1])
	}
	// Let the 5-second schedule fire a few times, so that the ledger, the
	// fire headers and the lateness histogram have something to show.
	testwait.Eventually(t, time.Minute, "three fires of heartbeat", func() bool {
		var v struct {
			State *kvstore.State `json:"state"`
		}
		return json.Unmarshal([]byte(e.cli("schedule", "get", "heartbeat", "--json")), &v) == nil && v.State != nil && v.State.Fires >= 3
	})
	year := time.Now().Year()
	// Each page whole at 1280 px; a phone's first screen at 390 x 844.
	shots := []struct {
		name, path string
		width      int64
	}{
		{"schedules", "/schedules", 1280},
		{"schedule", "/schedules/heartbeat", 1280},
		{"schedule-calendar", fmt.Sprintf("/schedules/payroll?month=%d-12", year), 1280},
		{"timers", "/timers", 1280},
		{"calendars", "/calendars", 1280},
		{"calendar", fmt.Sprintf("/calendars/us?year=%d", year), 1280},
		{"fleet", "/fleet", 1280},
		{"schedules-phone", "/schedules", 390},
		{"schedule-phone", "/schedules/nightly-report", 390},
	}
	for _, s := range shots {
		var png []byte
		height, scale, shot := int64(900), 1.0, chromedp.FullScreenshot(100)
		if s.width < 500 {
			height, scale, shot = 844, 2, chromedp.CaptureScreenshot()
		}
		err := chromedp.Do(ctx,
			chromedp.EmulateViewport(s.width, height, chromedp.EmulateScale(scale)),
			chromedp.Navigate(e.web+s.path),
			chromedp.WaitVisible(chromedp.CSS(`main`)),
			chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
				var err error
				png, err = shot(ctx, t)
				return err
			}))
		if err != nil {
			t.Fatalf("screenshot %s: %v", s.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, s.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, "reset viewport", chromedp.EmulateViewport(1280, 900))
}

// TestBrowserRefusesForeignHost (issue 52, DNS rebinding): Chromium is
// told that evil.example is 127.0.0.1, as an attacker's DNS would. The
// console without auth on loopback refuses the page loaded under that name
// (421, its explanation and nothing else: no form, no token), a POST from
// that page is refused whatever token it carries, and a request from it to
// the console's own name is refused too; the schedule stays paused. Under
// localhost, the same browser pauses and resumes.
func TestBrowserRefusesForeignHost(t *testing.T) {
	e := newLocalEnv(t, console.Config{})
	ctx := browser(t, chromedp.Flag("host-resolver-rules", "MAP evil.example 127.0.0.1"))
	e.cli("schedule", "add", "--id", "x", "--workflow", "wf", "--every", "1h")
	e.cli("schedule", "pause", "x", "--note", "held")
	port := e.port()
	_, page := e.hostGet("localhost:"+port, "/schedules/x")
	token := csrf(t, page)

	evil := "http://evil.example:" + port
	run(t, ctx, "open the console under evil.example", chromedp.Navigate(evil+"/schedules/x"), chromedp.WaitVisible(chromedp.CSS(`body`)))
	if text := eval[string](t, ctx, `document.body.innerText`); !strings.Contains(text, "does not answer to the host name") {
		t.Errorf("the page under evil.example says %q, want the refusal", text)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('form, input, a, script').length`); n != 0 {
		t.Errorf("the refusal under evil.example has %d forms, inputs, links or scripts", n)
	}
	if code := eval[int](t, ctx, `fetch("/schedules/x").then(r => r.status)`); code != 421 {
		t.Errorf("a fetch of the page from evil.example: %d, want 421", code)
	}
	if body := eval[string](t, ctx, `fetch("/schedules/x").then(r => r.text())`); strings.Contains(body, "csrf") || strings.Contains(body, "<form") {
		t.Errorf("a fetch of the page from evil.example reads %q", body)
	}
	post := `fetch("/schedules/x/resume", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "csrf=` + token + `"}).then(r => r.status)`
	if code := eval[int](t, ctx, post); code != 421 {
		t.Errorf("a resume posted from evil.example with a genuine token: %d, want 421", code)
	}
	// From evil.example to the console's own address: the browser sends
	// it as cross-site, without the session's SameSite=Strict cookie.
	crossSite := `fetch("http://127.0.0.1:` + port + `/schedules/x/resume", {method: "POST", mode: "no-cors", credentials: "include",
		headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: "csrf=` + token + `"}).then(() => "answered", e => "failed: " + e)`
	t.Logf("a cross-site resume from evil.example: %s", eval[string](t, ctx, crossSite))
	if e.paused("x") == nil {
		t.Fatal("a page under evil.example resumed the schedule")
	}

	run(t, ctx, "resume under localhost",
		chromedp.Navigate("http://localhost:"+port+"/schedules/x"),
		chromedp.Click(chromedp.CSS(`#resume`)),
		chromedp.WaitVisible(chromedp.CSS(`.banner.ok`)))
	if p := e.paused("x"); p != nil {
		t.Errorf("the resume under localhost left the schedule paused: %+v", p)
	}
}
