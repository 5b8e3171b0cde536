package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestBrowserDescribe: a schedule's page in headless Chromium shows what
// `scheduler schedule describe` shows: its last actions with their
// reasons (an operator's pause with its note and actor), its next fires
// as the scheduler plans them with their explanations (the pause that will
// skip them) and jitter offsets, the settings as run, and the spec's
// jitter; the console's own list of next fires notes the offsets too.
func TestBrowserDescribe(t *testing.T) {
	e := newEnv(t, console.Config{})
	ctx := browser(t)
	e.cli("schedule", "add", "--id", "nightly", "--workflow", "reports", "--cron", "0 2 * * *", "--jitter", "10m")
	testwait.Eventually(t, 15*time.Second, "nightly planned", func() bool {
		return strings.Contains(e.cli("schedule", "get", "nightly"), "next")
	})
	e.cli("schedule", "pause", "nightly", "--note", "db migration")

	run(t, ctx, "the schedule's page",
		chromedp.Navigate(e.web+"/login?next=/schedules/nightly"),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), operatorToken),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#describe`)))
	text := func(sel string) string {
		t.Helper()
		return eval[string](t, ctx, `(document.querySelector('`+sel+`') || {textContent: "(missing)"}).textContent`)
	}
	if got := text("#desc-actions"); !strings.Contains(got, "schedule.pause") || !strings.Contains(got, "db migration") {
		t.Errorf("the last actions say %q, want the pause with its note", got)
	}
	next := text("#desc-next")
	if strings.Count(next, "jitter +") < 3 || !strings.Contains(next, "skipped: paused") {
		t.Errorf("the next fires say %q, want each with its jitter offset and the pause that skips them", next)
	}
	if got := eval[string](t, ctx, `document.getElementById("desc-settings").textContent`); !strings.Contains(got, "misfire") || !strings.Contains(got, "skip (default)") {
		t.Errorf("the settings say %q", got)
	}
	if got := text("#jitter"); !strings.Contains(got, "up to 10m") {
		t.Errorf("the spec's jitter says %q", got)
	}
	if got := text(`section[aria-labelledby="next-h"] ol`); !strings.Contains(got, "jitter +") {
		t.Errorf("the console's next fires say %q, want jitter offsets", got)
	}
}
