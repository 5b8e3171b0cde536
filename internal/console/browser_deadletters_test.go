package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jetsched/jetsched/internal/console"
)

// TestBrowserDeadLetters drives the dead letters page in headless
// Chromium: a dead letter in SCHED_EVENTS is listed, its page shows why it
// failed, Retry shows the banner and the fire is republished once (a
// second press publishes nothing more), and Purge removes it.
func TestBrowserDeadLetters(t *testing.T) {
	e := newEnv(t, console.Config{})
	ctx := browser(t)
	e.cli("schedule", "add", "--id", "invoice", "--workflow", "billing", "--every", "1h")
	seq := e.deadLetter("billing", "invoice", "invoice.1796112000000", time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), "card declined", `{"amount":12}`)
	row := fmt.Sprintf(`tr[data-seq="%d"]`, seq)

	run(t, ctx, "sign in to the dead letters",
		chromedp.Navigate(e.web+"/login?next=/deadletters"),
		chromedp.SendKeys(chromedp.CSS(`input[name="token"]`), operatorToken),
		chromedp.Submit(chromedp.CSS(`input[name="token"]`)),
		chromedp.WaitVisible(chromedp.CSS(row)))
	if txt := eval[string](t, ctx, `document.querySelector('`+row+`').textContent`); !strings.Contains(txt, "card declined") || !strings.Contains(txt, "invoice") || !strings.Contains(txt, "billing") {
		t.Errorf("the dead letter's row says %q", txt)
	}
	if cur := eval[string](t, ctx, `document.querySelector('nav a[aria-current="page"]').textContent`); cur != "Dead letters" {
		t.Errorf("the nav marks %q as the current page", cur)
	}

	// Each action starts from the dead letter's page without a banner and
	// ends on the banner of its outcome.
	page := e.web + fmt.Sprintf("/deadletters/%d", seq)
	act := func(what, button, want string) {
		t.Helper()
		run(t, ctx, what,
			chromedp.Navigate(page),
			chromedp.WaitVisible(chromedp.CSS(button)),
			chromedp.Click(chromedp.CSS(button)),
			chromedp.WaitVisible(chromedp.CSS(`.banner.ok`)))
		if got := eval[string](t, ctx, `document.querySelector(".banner.ok").textContent`); !strings.Contains(got, want) {
			t.Fatalf("browser: %s: the banner says %q, want %q", what, got, want)
		}
	}
	run(t, ctx, "open the dead letter",
		chromedp.Click(chromedp.CSS(row+` a[href="/deadletters/`+fmt.Sprint(seq)+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#retry`)))
	if body := eval[string](t, ctx, `document.getElementById("dl-body").textContent`); !strings.Contains(body, `"amount": 12`) {
		t.Errorf("the dead letter's body shows %q", body)
	}
	act("retry", `#retry`, "Dead letter retried")
	if n := e.retries("billing", "invoice"); n != 1 {
		t.Fatalf("after Retry, SCHED_FIRES holds %d retries of invoice, want one", n)
	}
	act("retry again", `#retry`, "Already retried")
	if n := e.retries("billing", "invoice"); n != 1 {
		t.Fatalf("after a second Retry, SCHED_FIRES holds %d retries of invoice, want still one", n)
	}

	// Purge asks first (data-confirm); the test answers yes.
	run(t, ctx, "answer yes to confirmations", chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`#purge`)))
	eval[bool](t, ctx, `(window.confirm = () => true, true)`)
	run(t, ctx, "purge", chromedp.Click(chromedp.CSS(`#purge`)), chromedp.WaitVisible(chromedp.CSS(`.banner.ok`)))
	if got := eval[string](t, ctx, `document.querySelector(".banner.ok").textContent`); !strings.Contains(got, "Dead letter purged") {
		t.Fatalf("browser: purge: the banner says %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('`+row+`').length`); n != 0 {
		t.Errorf("the purged dead letter is still listed")
	}
	if code, _ := e.get(operatorToken, fmt.Sprintf("/deadletters/%d", seq)); code != http.StatusNotFound {
		t.Errorf("the purged dead letter's page: %d, want 404", code)
	}
}
