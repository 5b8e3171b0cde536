package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// env is a real nats-server with jetsched's buckets.
type env struct {
	t     *testing.T
	url   string
	store *jsstore.Store
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv on a server with base's options (nil: none).
func newEnvWith(t *testing.T, base *server.Options) *env {
	t.Helper()
	srv := natstest.StartWith(t, base)
	_, js := srv.Connect(t)
	if err := jsstore.Setup(context.Background(), js, jsstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	store, err := jsstore.Open(context.Background(), js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	// The CLI talks to the admin API, which every scheduler serves.
	api, err := adminapi.Start(context.Background(), adminapi.Config{Conn: js.Conn(), Store: store, ConditionBuckets: cliConditionBuckets})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Stop() })
	return &env{t: t, url: srv.URL(), store: store}
}

// run runs the command line against the env's server.
func (e *env) run(args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	args = append(args, "--nats-url", e.url)
	code = Main(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func (e *env) specCount() int {
	e.t.Helper()
	specs, _, err := e.store.ListSpecs(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return len(specs)
}

func TestScheduleAddRejectsBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	badFile := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(badFile, []byte(`{"a":`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"schedule", "add", "--workflow", "wf"}
	tests := []struct {
		name string
		args []string
		want string // the flag the error must name
	}{
		{"malformed cron", []string{"--id", "x", "--cron", "* * *"}, "--cron"},
		{"cron out of range", []string{"--id", "x", "--cron", "0 25 * * *"}, "--cron"},
		{"cron that never fires", []string{"--id", "x", "--cron", "0 0 30 2 *"}, "--cron"},
		{"unknown zone", []string{"--id", "x", "--cron", "0 9 * * *", "--tz", "Mars/Olympus_Mons"}, "--tz"},
		{"invalid JSON input", []string{"--id", "x", "--every", "5s", "--input", `{"a":`}, "--input"},
		{"invalid JSON input file", []string{"--id", "x", "--every", "5s", "--input", "@" + badFile}, "--input"},
		{"missing input file", []string{"--id", "x", "--every", "5s", "--input", "@/does/not/exist"}, "--input"},
		{"id with a dot", []string{"--id", "a.b", "--every", "5s"}, "--id"},
		{"id with a space", []string{"--id", "a b", "--every", "5s"}, "--id"},
		{"id with a wildcard", []string{"--id", "a*", "--every", "5s"}, "--id"},
		{"id with unicode", []string{"--id", "café", "--every", "5s"}, "--id"},
		{"bad interval", []string{"--id", "x", "--every", "soon"}, "--every"},
		{"workflow with a dot", []string{"--id", "x", "--every", "5s", "--workflow", "a.b"}, "--workflow"},
		{"one-shot in the past", []string{"--id", "x", "--at", "2001-01-01T00:00:00Z"}, "--at"},
		{"two recurrences", []string{"--id", "x", "--every", "5s", "--cron", "* * * * *"}, "every"},
		{"no recurrence", []string{"--id", "x"}, "cron"},
		{"bad DST gap policy", []string{"--id", "x", "--cron", "30 2 * * *", "--dst-gap", "jump"}, "--dst-gap"},
		{"bad DST overlap policy", []string{"--id", "x", "--cron", "30 1 * * *", "--dst-overlap", "thrice"}, "--dst-overlap"},
		{"bad dialect", []string{"--id", "x", "--cron", "0 0 12 ? * 2", "--dialect", "unix"}, "--dialect"},
		{"quartz without ?", []string{"--id", "x", "--cron", "0 0 12 * * 2", "--dialect", "quartz"}, "--cron"},
		{"limit without start", []string{"--id", "x", "--every", "5s", "--limit", "3"}, "--limit"},
		{"bad start", []string{"--id", "x", "--every", "5s", "--start", "soon"}, "--start"},
		{"DST policy on an interval", []string{"--id", "x", "--every", "5s", "--dst-gap", "skip"}, "--dialect"},
		// Issue 52: times outside the supported range (docs/records.md).
		{"at past Unix nanoseconds", []string{"--id", "x", "--at", "2262-04-11T23:47:17Z"}, "--at"},
		{"at in year 10000 by its offset", []string{"--id", "x", "--at", "9999-12-31T23:00:00-05:00"}, "--at"},
		{"start in year 10000", []string{"--id", "x", "--every", "1h", "--start", "9999-12-31T23:00:00-05:00"}, "--start"},
		{"end past the range", []string{"--id", "x", "--every", "1h", "--end", "2300-01-01T00:00:00Z"}, "--end"},
		{"anchor in year 10000", []string{"--id", "x", "--every", "1h", "--anchor", "9999-12-31T23:00:00-05:00"}, "--anchor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := e.run(append(base, tc.args...)...)
			if code != ExitInvalid {
				t.Fatalf("exit %d, want %d; stderr: %s", code, ExitInvalid, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Fatalf("stderr %q does not name %s", stderr, tc.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Fatalf("stderr is not one line: %q", stderr)
			}
			if stdout != "" {
				t.Fatalf("stdout %q, want nothing", stdout)
			}
			if n := e.specCount(); n != 0 {
				t.Fatalf("%d specs written, want none", n)
			}
		})
	}
}

func TestScheduleLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	code, out, errOut := e.run("schedule", "add", "--id", "report", "--workflow", "reports",
		"--cron", "0 9 * * 1-5", "--tz", "Europe/Paris", "--input", `{ "region": "eu" }`)
	if code != ExitOK {
		t.Fatalf("add: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "schedule report saved") || !strings.Contains(out, "sched.fire.reports.report") {
		t.Fatalf("add output %q", out)
	}

	code, out, _ = e.run("schedule", "get", "report", "--json")
	if code != ExitOK {
		t.Fatalf("get: exit %d", code)
	}
	var v scheduleView
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("get --json: %v\n%s", err, out)
	}
	if v.ID != "report" || v.Spec.Cron != "0 9 * * 1-5" || v.Spec.TZ != "Europe/Paris" {
		t.Fatalf("get --json: %+v", v)
	}
	paris, _ := time.LoadLocation("Europe/Paris")
	if !v.Planned || v.State == nil || v.State.Next.In(paris).Hour() != 9 || v.State.Next.In(paris).Weekday() == time.Sunday {
		t.Fatalf("get --json of a schedule that has not fired: want its planned next fire (a weekday 09:00 Paris), got planned=%v state %+v", v.Planned, v.State)
	}
	stored, err := e.store.GetSpec(context.Background(), "report")
	if err != nil || string(stored.Spec.Input) != `{"region":"eu"}` {
		t.Fatalf("stored input %q (%v), want the compact JSON", stored.Spec.Input, err)
	}

	code, out, _ = e.run("schedule", "ls")
	if code != ExitOK || !strings.Contains(out, "ID") || !strings.Contains(out, "report") || !strings.Contains(out, "09:00:00 CET") {
		t.Fatalf("ls: exit %d\n%s", code, out)
	}
	code, out, _ = e.run("schedule", "ls", "--json")
	var pg admin.Page[scheduleView]
	if code != ExitOK || json.Unmarshal([]byte(out), &pg) != nil || len(pg.Items) != 1 || pg.Total != 1 || pg.NextCursor != "" {
		t.Fatalf("ls --json: exit %d\n%s", code, out)
	}

	if code, _, errOut = e.run("schedule", "rm", "report"); code != ExitOK {
		t.Fatalf("rm: exit %d: %s", code, errOut)
	}
	if code, _, errOut = e.run("schedule", "rm", "report"); code != ExitNotFound || !strings.Contains(errOut, `not found: schedule "report"`) {
		t.Fatalf("rm again: exit %d: %s", code, errOut)
	}
	if n := e.specCount(); n != 0 {
		t.Fatalf("%d specs after rm", n)
	}
}

func TestScheduleImport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := filepath.Join(t.TempDir(), "specs.jsonl")
	if err := os.WriteFile(good, []byte(`{"id":"a","spec":{"workflow":"wf","every":"1m"}}
{"id":"b","spec":{"workflow":"wf","cron":"0 9 * * *"}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("schedule", "import", good)
	if code != ExitOK || !strings.Contains(out, "2 schedule(s) imported") || !strings.Contains(errOut, "imported 2/2") {
		t.Fatalf("import: exit %d: %s %s", code, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"id":"c","spec":{"workflow":"wf","every":"1m"}},{"id":"d","spec":{"workflow":"wf","cron":"0 0 30 2 *"}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = e.run("schedule", "import", bad)
	if code != ExitInvalid || !strings.Contains(errOut, "item 2") || !strings.Contains(errOut, "never fires") {
		t.Fatalf("import of a bad file: exit %d: %s", code, errOut)
	}
	if n := e.specCount(); n != 2 {
		t.Fatalf("%d specs after a refused import, want the 2 of the first", n)
	}
}

// TestScheduleAddPeerForms: every form migrating users bring (issue 15)
// registers through schedule add and the admin API, or is refused with exit
// status 2 naming the flag and nothing written; --dom-dow reaches the
// stored spec and the plan.
func TestScheduleAddPeerForms(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	accepted := []struct {
		cron   string
		domDow string
	}{
		{"0 0 * * friday", ""},
		{"0 9 1 January-MARCH *", ""},
		{"0 0 * * FRI-MON", ""},
		{"0 0 * * 7-4", ""},
		{"0 0 1 NOV-FEB *", ""},
		{"0 22-2/2 * * *", ""},
		{"0 0 29-L * *", ""},
		{"0 0 1-L/8 * *", ""},
		{"0 0 W15 * *", ""},
		{"0 0 L-2W * *", ""},
		{"0 0 2W,16 * *", ""},
		{"0 0 L-1W,L-1 * *", ""},
		{"0 0 0 1 1 * 2025,*", ""},
		{"@everyminute", ""},
		{"@always", ""},
		{"@5minutes", ""},
		{"@10minutes", ""},
		{"@15minutes", ""},
		{"@30minutes", ""},
		{"0 0 */10 * SUN", "cronie"},
		{"0 0 */10 * SUN", "posix"},
		{"0 0 13 * FRI", "and"},
	}
	for i, tc := range accepted {
		id := fmt.Sprintf("peer-%d", i)
		args := []string{"schedule", "add", "--id", id, "--workflow", "wf", "--cron", tc.cron}
		if tc.domDow != "" {
			args = append(args, "--dom-dow", tc.domDow)
		}
		if code, _, stderr := e.run(args...); code != ExitOK {
			t.Fatalf("add %q (dom-dow %q): exit %d: %s", tc.cron, tc.domDow, code, stderr)
		}
		stored, err := e.store.GetSpec(context.Background(), id)
		if err != nil || stored.Spec.Cron != tc.cron || stored.Spec.DomDow != tc.domDow {
			t.Fatalf("stored %+v (%v), want cron %q dom_dow %q", stored.Spec, err, tc.cron, tc.domDow)
		}
	}

	// The planned next fire of "0 0 13 * FRI" under "and" is a Friday the
	// 13th (under cronie it would be the next Friday or 13th).
	id := fmt.Sprintf("peer-%d", len(accepted)-1)
	code, out, _ := e.run("schedule", "get", id, "--json")
	var v scheduleView
	if code != ExitOK || json.Unmarshal([]byte(out), &v) != nil {
		t.Fatalf("get --json: exit %d\n%s", code, out)
	}
	if v.Spec.DomDow != "and" || v.State == nil || v.State.Next.UTC().Day() != 13 || v.State.Next.UTC().Weekday() != time.Friday {
		t.Fatalf("get --json: dom_dow %q, planned %+v; want and, a Friday the 13th", v.Spec.DomDow, v.State)
	}

	before := e.specCount()
	refused := []struct {
		name string
		args []string
		want string
	}{
		{"# in a list", []string{"--cron", "0 0 * * 5,6#3"}, "--cron"},
		{"lone L in a list", []string{"--cron", "0 0 * * SAT,SUN,L"}, "--cron"},
		{"quartz lone L in a list", []string{"--cron", "0 0 12 ? * SAT,SUN,L", "--dialect", "quartz"}, "--cron"},
		{"year range backwards", []string{"--cron", "0 0 0 1 1 * 2031-2030"}, "--cron"},
		{"bad dom-dow", []string{"--cron", "0 0 13 * FRI", "--dom-dow", "or"}, "--dom-dow"},
		{"dom-dow on an interval", []string{"--every", "5s", "--dom-dow", "posix"}, "--dom-dow"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := e.run(append([]string{"schedule", "add", "--id", "refused", "--workflow", "wf"}, tc.args...)...)
			if code != ExitInvalid || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and one line naming %s", code, stdout, stderr, ExitInvalid, tc.want)
			}
			if n := e.specCount(); n != before {
				t.Fatalf("%d specs, want %d: a refused spec was written", n, before)
			}
		})
	}
}

// A bad --memory-limit is refused before anything starts.
func TestRunRefusesABadMemoryLimit(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"run", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--memory-limit", "lots"}, &out, &errOut)
	if code != ExitInvalid || !strings.Contains(errOut.String(), "--memory-limit") {
		t.Fatalf("exit %d, stderr %q; want %d naming --memory-limit", code, errOut.String(), ExitInvalid)
	}
}

// Engine settings out of range are refused before anything starts, naming
// the flag (--timer-workers -1 used to panic at start).
func TestRunRefusesEngineSettingsOutOfRange(t *testing.T) {
	for _, args := range [][]string{
		{"--timer-workers", "-1"}, {"--workers", "0"}, {"--claim-ttl", "0s"}, {"--claim-ttl", "11m"},
		{"--lease-ttl", "500ms"}, {"--misfire-threshold", "-1s"}, {"--tick-retention", "0s"},
		{"--duplicate-window", "50s"}, {"--shards", "0"}, {"--dead-man-tolerance", "0s"},
		{"--fire-retention", "0s"}, {"--fire-history", "0"}, {"--fire-history", "-2"}, {"--fire-retention", "1m"},
		{"--nats-ping-interval", "500ms"}, {"--nats-ping-interval", "3m"}, {"--record-lag", "-1s"}, {"--record-lag", "90h"}, {"--state-interval", "-1s"}, {"--state-interval", "1m1s"},
		{"--fire-quantum", "-1ms"}, {"--fire-quantum", "101ms"},
		// Issue 52: a duration past 10 years overflowed (a lease guard at
		// 9/10 of a 300-year TTL is negative: the guard never opened).
		{"--lease-ttl", "2562047h"}, {"--misfire-threshold", "2562047h"}, {"--tick-retention", "2562047h"},
		{"--dead-man-tolerance", "2562047h"}, {"--fire-retention", "2562047h"},
	} {
		var out, errOut bytes.Buffer
		dir := t.TempDir()
		code := Main(context.Background(), append([]string{"run", "--listen", "127.0.0.1:0", "--data-dir", dir}, args...), &out, &errOut)
		named := strings.Contains(errOut.String(), args[0]+" "+args[1]) || strings.Contains(errOut.String(), fmt.Sprintf("%s %q", args[0], args[1]))
		if code != ExitInvalid || !named {
			t.Errorf("run %v: exit %d, stderr %q; want %d naming the flag", args, code, errOut.String(), ExitInvalid)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("run %v: the embedded server started before the check (%d entries in its store)", args, len(entries))
		}
	}
}

// TestTimeFlagsOutOfRange (issue 52): a pause until the zero time paused
// for ever (read as "no until"), one past year 9999 answered internal, and
// so did a timer's; each is refused with exit 2 naming the flag, and
// nothing changes.
func TestTimeFlagsOutOfRange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if code, _, errOut := e.run("schedule", "add", "--id", "s", "--workflow", "wf", "--every", "1h"); code != ExitOK {
		t.Fatalf("add: exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{
		{"schedule", "pause", "s", "--until", "0001-01-01T00:00:00Z"},
		{"schedule", "pause", "s", "--until", "9999-12-31T23:00:00-05:00"},
		{"schedule", "pause", "s", "--until", "2262-04-11T23:47:17Z"},
		{"schedule", "pause", "s", "--for", "2562047h"},
		{"wakeup", "add", "--run", "r", "--step", "a", "--workflow", "wf", "--at", "9999-12-31T23:00:00-05:00"},
		{"wakeup", "add", "--run", "r", "--step", "b", "--workflow", "wf", "--when", "9999-12-31"},
		{"wakeup", "add", "--run", "r", "--step", "c", "--workflow", "wf", "--when-expr", `now + duration("2562047h")`},
		{"preview", "--every", "1h", "--from", "9999-12-31T23:00:00-05:00"},
		{"preview", "--from", "0001-01-01T00:00:00Z", "0 3 * * *"},
		{"wakeup", "preview", "--from", "2026-01-01T00:00:00Z", "--when", "2300-01-01"},
		{"wakeup", "preview", "--from", "2026-01-01T00:00:00Z", "--when-expr", `now + duration("2562047h")`},
	} {
		code, _, errOut := e.run(args...)
		flag := args[len(args)-2]
		if args[0] == "preview" {
			flag = "--from"
		}
		if code != ExitInvalid || !strings.Contains(errOut, flag) {
			t.Errorf("%v: exit %d, stderr %q; want %d naming %s", args, code, errOut, ExitInvalid, flag)
		}
	}
	code, out, _ := e.run("schedule", "get", "s", "--json")
	if code != ExitOK || strings.Contains(out, `"paused"`) {
		t.Fatalf("after refused pauses: exit %d\n%s", code, out)
	}
}
