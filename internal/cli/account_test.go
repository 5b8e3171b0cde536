package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// tickEvery is the interval of the accounting tests' schedules.
const tickEvery = 200 * time.Millisecond

// forged is a schedule every 200 ms (aligned to the epoch) whose evidence
// a test writes by hand.
type forged struct {
	e    *env
	id   string
	spec jsstore.SpecEntry
	plan string
	// first is its first owed slot.
	first time.Time
}

// forge registers schedule id, every 200 ms, and waits until n of its
// slots have passed.
func (e *env) forge(id string, n int) forged {
	e.t.Helper()
	ctx := context.Background()
	if _, err := e.store.PutSpec(ctx, id, kvstore.Spec{Workflow: "w", Every: "200ms", Align: kvstore.AlignEpoch}); err != nil {
		e.t.Fatal(err)
	}
	spec, err := e.store.GetSpec(ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := compile.Compile(spec.Spec, id, nil, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	f := forged{e: e, id: id, spec: spec, plan: c.Plan, first: spec.Written.Truncate(tickEvery)}
	if f.first.Before(spec.Written) {
		f.first = f.first.Add(tickEvery)
	}
	time.Sleep(time.Until(f.slot(n - 1).Add(50 * time.Millisecond)))
	return f
}

func (f forged) slot(i int) time.Time { return f.first.Add(time.Duration(i) * tickEvery).UTC() }

// fire puts slot i's fire into the stream.
func (f forged) fire(i int) {
	natstest.PublishFire(f.e.t, f.e.store.JetStream(), natstest.Fire{Schedule: f.id, Workflow: "w", At: f.slot(i), Instance: "i1"})
}

// missed records slot i missed in the ledger.
func (f forged) missed(i int) {
	f.e.t.Helper()
	t := kvstore.Tick{Schedule: f.id, Slot: f.slot(i), Status: kvstore.TickMissed, Reason: "misfire: 2s late, threshold 1m0s"}
	if err := f.e.store.PutTick(context.Background(), t); err != nil {
		f.e.t.Fatal(err)
	}
}

// next writes the state record: the scheduler has passed every slot
// before slot i.
func (f forged) next(i int) {
	f.e.t.Helper()
	if _, err := f.e.store.CreateState(context.Background(), f.id, kvstore.State{Plan: f.plan, Next: f.slot(i), Fires: 2}); err != nil {
		f.e.t.Fatal(err)
	}
}

// TestScheduleAccount (issue 51): `schedule account` lists every owed
// slot with its fate and prints the summary line; exit 0 when every slot
// is accounted for, 1 when one is not (listed unaccounted), 2 for a bad
// --from.
func TestScheduleAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// a: slots 0 and 1 fired, 2 and 3 missed, 4 on ahead of the scheduler.
	a := e.forge("a", 8)
	a.fire(0)
	a.fire(1)
	a.missed(2)
	a.missed(3)
	a.next(4)
	to := a.slot(7).Format(time.RFC3339Nano)
	code, out, errOut := e.run("schedule", "account", "a", "--to", to)
	if code != ExitOK || !strings.Contains(out, "\nowed 8, fired 2, not fired with reason 2, pending 4, unaccounted 0\n") {
		t.Fatalf("account a: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "NOMINAL") || len(lines) < 10 {
		t.Fatalf("account a: want a header and 8 rows:\n%s", out)
	}
	for i, fate := range []string{"fired", "fired", "not_fired", "not_fired", "pending", "pending", "pending", "pending"} {
		row := lines[1+i]
		if !strings.HasPrefix(row, stampUTC(a.slot(i))) || !strings.Contains(row, " "+fate+" ") {
			t.Errorf("row %d: %q, want %s at %s", i, row, fate, stampUTC(a.slot(i)))
		}
	}
	if !strings.Contains(lines[1], "SCHED_FIRES seq") || !strings.Contains(lines[3], "misfire: 2s late") || !strings.Contains(lines[5], "next slot is") {
		t.Errorf("rows do not give the evidence:\n%s", out)
	}

	code, out, errOut = e.run("schedule", "account", "a", "--to", to, "--json")
	var doc struct {
		Summary account.Summary `json:"summary"`
		Items   []account.Entry `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil || len(doc.Items) != 8 || doc.Summary.Fired != 2 || doc.Summary.Pending != 4 {
		t.Fatalf("account a --json: exit %d %v\n%s%s", code, err, out, errOut)
	}

	// b: slots 0 and 1 fired; the record says 5 is next, and 2 to 4 have
	// nothing: unaccounted.
	b := e.forge("b", 7)
	b.fire(0)
	b.fire(1)
	b.next(5)
	code, out, errOut = e.run("schedule", "account", "b", "--to", b.slot(6).Format(time.RFC3339Nano))
	if code != ExitFailure || !strings.Contains(out, "\nowed 7, fired 2, not fired with reason 0, pending 2, unaccounted 3\n") ||
		strings.Count(out, "  unaccounted  ") != 3 || !strings.Contains(errOut, `schedule "b": 3 unaccounted slot(s)`) {
		t.Fatalf("account b: exit %d\n%s%s", code, out, errOut)
	}
	for i := 2; i <= 4; i++ {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(stampUTC(b.slot(i))) + `\s.*unaccounted\s+-\s+no fire in the stream`).MatchString(out) {
			t.Errorf("slot %d is not listed unaccounted:\n%s", i, out)
		}
	}

	// Every page, 3 entries a request: the same rows and summary.
	var buf, errBuf bytes.Buffer
	app := &app{stdout: &buf, stderr: &errBuf, namePrefix: "sched", conn: natsconn.Options{URL: e.url}}
	nc, err := app.connectAPI()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := app.printAccount(context.Background(), nc, admin.AccountRequest{ID: "a", To: to, Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if _, paged, _ := e.run("schedule", "account", "a", "--to", to); strings.Count(buf.String(), "\n") != 11 || buf.String() != paged {
		t.Fatalf("account a, 3 entries a page:\n%s\nwant, in one page:\n%s", buf.String(), paged)
	}

	e.refused(ExitInvalid, "--from", "schedule", "account", "a", "--from", "yesterday")
	e.refused(ExitInvalid, "--to", "schedule", "account", "a", "--from", "2026-12-02T00:00:00Z", "--to", "2026-12-01T00:00:00Z")
	e.refused(ExitNotFound, `not found: schedule "nope"`, "schedule", "account", "nope")
}

// TestScheduleAccountFromTheEngine: a schedule the fire engine ran, with
// slots missed while no scheduler ran, is all accounted for: the fires
// counted are the stream's, the missed ones the ledger's, exit 0.
func TestScheduleAccountFromTheEngine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.store.PutSpec(ctx, "live", kvstore.Spec{Workflow: "w", Every: "200ms", Align: kvstore.AlignEpoch, MisfireThreshold: "100ms"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // no scheduler: these slots are missed
	fe, err := fires.New(fires.Config{Store: e.store, Instance: "cli-test", LeaseTTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := fe.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := fe.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	to := time.Now()
	code, out, errOut := e.run("schedule", "account", "live", "--to", to.Format(time.RFC3339Nano), "--json")
	var doc struct {
		Summary account.Summary `json:"summary"`
		Items   []account.Entry `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil {
		t.Fatalf("account live: exit %d %v\n%s%s", code, err, out, errOut)
	}
	s := doc.Summary
	fired := 0
	if err := e.store.FiresOf(ctx, "live", func(f jsstore.Fired) bool {
		if f.Slot.After(s.From) && !f.Slot.After(s.To) {
			fired++
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if s.Unaccounted != 0 || s.Fired != fired || s.Fired < 3 || s.NotFired < 3 || s.Owed != s.Fired+s.NotFired+s.Pending || s.Owed != len(doc.Items) {
		t.Fatalf("account live: %s, %d fires in the stream\n%s", s.Line(), fired, out)
	}
}

// totalLine matches the total line of audit slots.
var totalLine = regexp.MustCompile(`(?m)^schedules (\d+), owed (\d+), fired (\d+), not fired with reason (\d+), pending (\d+), unaccounted (\d+)$`)

// TestAuditSlots: `audit slots` accounts every schedule in id order, a
// line each and the total; exit 1 when one has an unaccounted slot;
// --problems prints only those; --limit stops with the cursor that
// --cursor goes on from; --json prints lines and the totals.
func TestAuditSlots(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.forge("a", 4) // fired 0 and 1, missed 2, ahead at 3
	a.fire(0)
	a.fire(1)
	a.missed(2)
	a.next(3)
	b := e.forge("b", 4) // fired 0 and 1, unaccounted 2, ahead at 3
	b.fire(0)
	b.fire(1)
	b.next(3)
	e.forge("c", 1) // no scheduler yet: every slot pending
	specs, err := e.store.JetStream().KeyValue(context.Background(), "sched_specs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(context.Background(), "d", []byte(`{"workflow":"w","cron":"0 25 * * *"}`)); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := e.run("audit", "slots")
	m := totalLine.FindStringSubmatch(out)
	if code != ExitFailure || m == nil || m[1] != "4" || m[6] != "1" || !strings.Contains(errOut, "1 unaccounted slot(s) in 1 schedule(s)") {
		t.Fatalf("audit slots: exit %d\n%s%s", code, out, errOut)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	if n(2) != n(3)+n(4)+n(5)+n(6) || n(3) != 4 || n(4) < 1 {
		t.Fatalf("audit slots: the total does not add up: %s", m[0])
	}
	for _, want := range []string{"a: owed ", "b: owed ", "unaccounted 1 (first at " + stampUTC(b.slot(2)) + ")", "c: owed ", "d: invalid: ", "of which 1 invalid"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit slots does not print %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "a: ") > strings.Index(out, "b: ") || strings.Index(out, "b: ") > strings.Index(out, "c: ") {
		t.Errorf("audit slots: not in id order:\n%s", out)
	}

	code, out, _ = e.run("audit", "slots", "--problems")
	if code != ExitFailure || strings.Contains(out, "a: ") || !strings.Contains(out, "b: owed") || strings.Contains(out, "c: ") || !totalLine.MatchString(out) {
		t.Fatalf("audit slots --problems: exit %d\n%s", code, out)
	}

	code, out, _ = e.run("audit", "slots", "--limit", "2")
	if code != ExitFailure || !strings.Contains(out, "a: ") || !strings.Contains(out, "b: ") || strings.Contains(out, "c: ") ||
		!strings.Contains(out, "\nschedules 2, ") || !strings.Contains(out, "next cursor: b (go on with --cursor b)") {
		t.Fatalf("audit slots --limit 2: exit %d\n%s", code, out)
	}
	code, out, errOut = e.run("audit", "slots", "--cursor", "b")
	if code != ExitOK || strings.Contains(out, "b: ") || !strings.Contains(out, "c: ") || !strings.Contains(out, "d: invalid") ||
		!strings.Contains(out, "\nschedules 2, ") || !strings.Contains(out, ", unaccounted 0\n") || strings.Contains(out, "next cursor") {
		t.Fatalf("audit slots --cursor b: exit %d\n%s%s", code, out, errOut)
	}

	code, out, _ = e.run("audit", "slots", "--json")
	rows := strings.Split(strings.TrimSpace(out), "\n")
	var last struct {
		Schedules   int `json:"schedules"`
		Unaccounted int `json:"unaccounted"`
		Invalid     int `json:"invalid"`
	}
	if code != ExitFailure || len(rows) != 5 || json.Unmarshal([]byte(rows[4]), &last) != nil || last.Schedules != 4 || last.Unaccounted != 1 || last.Invalid != 1 {
		t.Fatalf("audit slots --json: exit %d\n%s", code, out)
	}
	var row struct {
		ID      string          `json:"id"`
		Summary account.Summary `json:"summary"`
	}
	if json.Unmarshal([]byte(rows[1]), &row) != nil || row.ID != "b" || row.Summary.Unaccounted != 1 {
		t.Fatalf("audit slots --json: row of b: %s", rows[1])
	}

	e.refused(ExitInvalid, "--since", "audit", "slots", "--since", "last week")
	e.refused(ExitInvalid, "--limit", "audit", "slots", "--limit", "-1")
	e.refused(ExitInvalid, "--cursor", "audit", "slots", "--cursor", "a b")
}
