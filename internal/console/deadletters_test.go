package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/console"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// deadLetter publishes into SCHED_EVENTS what pkg/worker publishes when it
// gives up on a fire of schedule id (workflow wf, slot slotID due at
// slot): the original headers and body plus the original subject and id,
// the deliveries and the error. It returns the dead letter's sequence.
func (e *env) deadLetter(wf, id, slotID string, slot time.Time, reason, body string) uint64 {
	e.t.Helper()
	m := nats.NewMsg(kvstore.Layout{}.DeadLetterSubject(wf, slotID))
	m.Header.Set(kvstore.HeaderScheduleID, id)
	m.Header.Set(kvstore.HeaderWorkflow, wf)
	m.Header.Set(kvstore.HeaderScheduledAt, slot.UTC().Format(time.RFC3339Nano))
	m.Header.Set("Sched-Original-Subject", kvstore.Layout{}.FireSubject(wf, id))
	m.Header.Set("Sched-Original-Id", slotID)
	m.Header.Set("Sched-Deliveries", "5")
	m.Header.Set("Sched-Error", reason)
	m.Data = []byte(body)
	ack, err := e.d.JetStream().PublishMsg(context.Background(), m)
	if err != nil {
		e.t.Fatal(err)
	}
	return ack.Sequence
}

// retries counts the retries of schedule id (workflow wf) in SCHED_FIRES.
func (e *env) retries(wf, id string) uint64 {
	e.t.Helper()
	ctx := context.Background()
	subject := kvstore.Layout{}.FireSubject(wf, id) + ".retry"
	s, err := e.d.JetStream().Stream(ctx, "SCHED_FIRES")
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		e.t.Fatal(err)
	}
	return info.State.Subjects[subject]
}

// triggeredSlot triggers schedule id and returns the slot id of its
// fire, which the ledger has an entry for.
func (e *env) triggeredSlot(id string) string {
	e.t.Helper()
	e.cli("schedule", "trigger", id)
	var slot string
	testwait.Eventually(e.t, 10*time.Second, "the trigger of "+id+" fired", func() bool {
		f, err := e.d.Store().LastFired(context.Background(), id)
		slot = f.SlotID
		return err == nil && slot != ""
	})
	return slot
}

// seqs lists the sequences of the dead letters on a list page.
func seqs(page string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<tr data-seq="(\d+)">`).FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDeadLetterPages: the list is newest first, filters by workflow and
// pages with the API's cursor; a dead letter's page shows its headers,
// its body and the slot's ledger entry; retry publishes the fire once
// however often it is pressed, purge deletes one, and "purge all" of a
// workflow wants the workflow typed again; both actions are audited
// under the console user.
func TestDeadLetterPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	e.cli("schedule", "add", "--id", "invoice", "--workflow", "billing", "--every", "1h")
	slotID := e.triggeredSlot("invoice")
	slot := time.Now().UTC().Truncate(time.Second)
	for i := range 51 {
		e.deadLetter("bulk", "job", fmt.Sprintf("job.%d", i), slot, "boom", "{}")
	}
	seq := e.deadLetter("billing", "invoice", slotID, slot, "card declined", `{"amount":12}`)
	want := fmt.Sprint(seq)

	_, page := e.get(viewerToken, "/deadletters")
	first := seqs(page)
	if len(first) != 50 || first[0] != want || !strings.Contains(page, "52 dead letter(s)") || !strings.Contains(page, `aria-current="page">Dead letters`) {
		t.Fatalf("first page: %d rows starting %v, want 50 newest first from %s:\n%s", len(first), first[:min(len(first), 1)], want, page)
	}
	if strings.Contains(page, `name="csrf"`) {
		t.Errorf("a viewer is shown action forms")
	}
	m := regexp.MustCompile(`href="(/deadletters\?cursor=\d+)" rel="next"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no next page link:\n%s", page)
	}
	_, page = e.get(viewerToken, m[1])
	if rest := seqs(page); len(rest) != 2 || atoi(t, rest[0]) >= atoi(t, first[49]) || atoi(t, rest[1]) >= atoi(t, rest[0]) || !strings.Contains(page, "« Newest") {
		t.Errorf("second page: %v after %v, want the 2 oldest, newest first", rest, first[49])
	}
	_, page = e.get(operatorToken, "/deadletters?workflow=billing")
	for _, s := range []string{"1 dead letter(s) of billing", `<a href="/schedules/invoice">invoice</a>`, "card declined", `action="/deadletters/` + want + `/retry"`, `id="purge-all"`} {
		if !strings.Contains(page, s) {
			t.Errorf("billing's list lacks %q", s)
		}
	}
	if got := seqs(page); len(got) != 1 || got[0] != want {
		t.Errorf("billing's list: %v, want [%s]", got, want)
	}
	if code, page := e.get(viewerToken, "/deadletters?workflow=bad.wf"); code != http.StatusBadRequest || !strings.Contains(page, "workflow") {
		t.Errorf("a bad workflow filter: %d", code)
	}

	code, page := e.get(viewerToken, "/deadletters/"+want)
	if code != http.StatusOK {
		t.Fatalf("dead letter page: %d\n%s", code, page)
	}
	for _, s := range []string{"card declined", "<code>Sched-Error</code>", "<code>" + slotID + "</code>", "&#34;amount&#34;: 12", `id="dl-ledger"`} {
		if !strings.Contains(page, s) {
			t.Errorf("dead letter page lacks %q:\n%s", s, page)
		}
	}
	for path, status := range map[string]int{"/deadletters/abc": http.StatusBadRequest, "/deadletters/0": http.StatusBadRequest, "/deadletters/999999": http.StatusNotFound} {
		if code, _ := e.get(viewerToken, path); code != status {
			t.Errorf("GET %s: %d, want %d", path, code, status)
		}
	}

	_, page = e.get(operatorToken, "/deadletters/"+want)
	token := csrf(t, page)
	for i, done := range []string{"Dead letter retried", "Already retried"} {
		code, _ := e.post(operatorToken, "/deadletters/"+want+"/retry", url.Values{"csrf": {token}})
		if code != http.StatusSeeOther {
			t.Fatalf("retry %d: %d", i+1, code)
		}
		code, page = e.get(operatorToken, "/deadletters/"+want+"?done="+[]string{"dl-retried", "dl-already"}[i])
		if code != http.StatusOK || !strings.Contains(page, done) {
			t.Errorf("after retry %d, the page lacks %q", i+1, done)
		}
	}
	if n := e.retries("billing", "invoice"); n != 1 {
		t.Errorf("SCHED_FIRES holds %d retries of invoice, want one", n)
	}
	if who := fmt.Sprint(e.auditEntry("deadletter.retry", want)); !strings.Contains(who, "console:alice") {
		t.Errorf("the audit entry of the retry does not name console:alice: %s", who)
	}

	code, body := e.post(operatorToken, "/deadletters/"+want+"/purge", url.Values{"csrf": {token}, "workflow": {"billing"}})
	if code != http.StatusSeeOther {
		t.Fatalf("purge: %d\n%s", code, body)
	}
	if code, _ := e.get(operatorToken, "/deadletters/"+want); code != http.StatusNotFound {
		t.Errorf("the purged dead letter's page: %d, want 404", code)
	}
	if code, _ := e.post(operatorToken, "/deadletters/"+want+"/purge", url.Values{"csrf": {token}}); code != http.StatusNotFound {
		t.Errorf("purging it again: %d, want 404", code)
	}
	if code, page := e.get(operatorToken, "/deadletters?workflow=billing&done=dl-purged"); code != http.StatusOK || !strings.Contains(page, "Dead letter purged.") || !strings.Contains(page, "No dead letter of billing") {
		t.Errorf("billing's list after the purge: %d\n%s", code, page)
	}

	// Purge all of a workflow: the name typed again, or nothing.
	code, body = e.post(operatorToken, "/deadletters/purge", url.Values{"csrf": {token}, "workflow": {"bulk"}, "confirm": {"bul"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "confirm: type the workflow&#39;s name, bulk") || !strings.Contains(body, "51 dead letter(s) of bulk") {
		t.Errorf("purge all without the typed name: %d\n%s", code, body)
	}
	if code, _ = e.post(operatorToken, "/deadletters/purge", url.Values{"csrf": {token}, "workflow": {"bulk"}, "confirm": {"bulk"}}); code != http.StatusSeeOther {
		t.Fatalf("purge all: %d", code)
	}
	if _, page = e.get(operatorToken, "/deadletters?done=dl-purged-all"); !strings.Contains(page, "0 dead letter(s)") || !strings.Contains(page, "dead letters are purged") {
		t.Errorf("after purge all:\n%s", page)
	}
	if who := fmt.Sprint(e.auditEntry("deadletter.purge", "bulk")); !strings.Contains(who, "console:alice") {
		t.Errorf("the audit entry of the purge does not name console:alice: %s", who)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDeadLetterActionsRefused: a viewer, a form without the session's
// CSRF token, a cross-site post and a read-only console cannot retry or
// purge, and nothing is published or deleted.
func TestDeadLetterActionsRefused(t *testing.T) {
	t.Parallel()
	for _, readOnly := range []bool{false, true} {
		e := newEnv(t, console.Config{ReadOnly: readOnly})
		seq := fmt.Sprint(e.deadLetter("billing", "invoice", "invoice.1796112000000", time.Now(), "card declined", "{}"))
		_, page := e.get(operatorToken, "/deadletters/"+seq)
		if readOnly {
			if strings.Contains(page, `name="csrf"`) || !strings.Contains(page, "read-only") {
				t.Errorf("a read-only console shows the dead letter's actions")
			}
			for _, action := range []string{"retry", "purge"} {
				if code, body := e.post(operatorToken, "/deadletters/"+seq+"/"+action, url.Values{}); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
					t.Errorf("%s on a read-only console: %d %s", action, code, body)
				}
			}
			if code, _ := e.post(operatorToken, "/deadletters/purge", url.Values{"workflow": {"billing"}, "confirm": {"billing"}}); code != http.StatusForbidden {
				t.Errorf("purge all on a read-only console: %d", code)
			}
		} else {
			token := csrf(t, page)
			form := url.Values{"csrf": {token}}
			for _, c := range []struct {
				name, token string
				form        url.Values
				headers     []string
			}{
				{"viewer", viewerToken, form, nil},
				{"no CSRF token", operatorToken, url.Values{}, nil},
				{"someone else's CSRF token", operatorToken, url.Values{"csrf": {"forged"}}, nil},
				{"cross-site", operatorToken, form, []string{"Sec-Fetch-Site", "cross-site"}},
				{"nobody", "", form, nil},
			} {
				for _, path := range []string{"/deadletters/" + seq + "/retry", "/deadletters/" + seq + "/purge", "/deadletters/purge"} {
					f := url.Values{"workflow": {"billing"}, "confirm": {"billing"}}
					for k, v := range c.form {
						f[k] = v
					}
					if code, _ := e.post(c.token, path, f, c.headers...); code != http.StatusForbidden && code != http.StatusUnauthorized {
						t.Errorf("%s: POST %s answered %d, want 403 or 401", c.name, path, code)
					}
				}
			}
		}
		if n := e.retries("billing", "invoice"); n != 0 {
			t.Errorf("read-only %v: a refused retry published %d messages", readOnly, n)
		}
		if code, _ := e.get(viewerToken, "/deadletters/"+seq); code != http.StatusOK {
			t.Errorf("read-only %v: the dead letter is gone after refused purges: %d", readOnly, code)
		}
	}
}
