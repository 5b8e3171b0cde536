package console_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/jetsched/jetsched/internal/console"
)

// TestBrowserLabels: the schedule list's Labels box filters by a label
// selector (the query parameter selector, kept in the page links), each
// row shows its labels, a schedule's page links its labels to the list
// they select, and a bad selector is answered 400 naming it.
func TestBrowserLabels(t *testing.T) {
	e := newLocalEnv(t, console.Config{})
	ctx := browser(t)
	e.cli("schedule", "add", "--id", "invoices", "--workflow", "billing", "--every", "1h", "--label", "team=billing", "--label", "tier=gold")
	e.cli("schedule", "add", "--id", "reminders", "--workflow", "billing", "--every", "1h", "--label", "team=billing", "--label", "tier=silver")
	e.cli("schedule", "add", "--id", "reindex", "--workflow", "search", "--every", "1h", "--label", "team=search")

	run(t, ctx, "filter by labels",
		chromedp.Navigate(e.web+"/schedules"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-id="reindex"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name="selector"]`), "team=billing,tier!=silver"),
		chromedp.Submit(chromedp.CSS(`input[name="selector"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`tr[data-id="reindex"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-id="invoices"]`)))
	if n := eval[int](t, ctx, `document.querySelectorAll('tr[data-id]').length`); n != 1 {
		t.Errorf("the filtered list shows %d rows, want 1 (invoices)", n)
	}
	if got := eval[string](t, ctx, `new URL(location.href).searchParams.get("selector")`); got != "team=billing,tier!=silver" {
		t.Errorf("the page's selector parameter is %q", got)
	}
	if got := eval[string](t, ctx, `[...document.querySelectorAll('tr[data-id="invoices"] .label')].map(e => e.textContent).join(" ")`); got != "team=billing tier=gold" {
		t.Errorf("the row shows labels %q", got)
	}
	run(t, ctx, "a schedule's labels link to their list",
		chromedp.Navigate(e.web+"/schedules/reindex"),
		chromedp.Click(chromedp.CSS(`a.label`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-id="reindex"]`)))
	if n := eval[int](t, ctx, `document.querySelectorAll('tr[data-id]').length`); n != 1 {
		t.Errorf("the list of team=search shows %d rows, want 1", n)
	}

	code, page := e.get("", "/schedules?selector="+url.QueryEscape("team billing"))
	if code != 400 || !strings.Contains(page, "invalid selector") {
		t.Errorf("a bad selector: %d, page names it: %v", code, strings.Contains(page, "invalid selector"))
	}
}
