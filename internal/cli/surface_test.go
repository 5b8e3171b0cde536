package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/bench"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// auditEnv is an env whose admin API records an audit trail; keyFile
// holds its key.
type auditEnv struct {
	*env
	keyFile string
}

func newAuditEnv(t *testing.T) auditEnv {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	if err := auditlog.Setup(ctx, js, audit.Trail{}, 1); err != nil {
		t.Fatal(err)
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	key := "0123456789abcdef0123456789abcdef"
	store.SetAuditor(auditlog.New(js, []byte(key), "test"))
	api, err := adminapi.Start(ctx, adminapi.Config{Conn: js.Conn(), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Stop() })
	keyFile := filepath.Join(t.TempDir(), "audit.key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	return auditEnv{env: &env{t: t, url: srv.URL(), store: store}, keyFile: keyFile}
}

// auditEntries counts the messages of the audit trail.
func (e auditEnv) auditEntries() uint64 {
	e.t.Helper()
	nc, err := nats.Connect(e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := js.Stream(context.Background(), audit.Stream)
	if err != nil {
		e.t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return info.State.Msgs
}

// TestAddWithoutIDAndAgain: the first two failing cases. An add
// without --id gets the content hash as id (the Go client's), and the
// same add again, as services do at every boot, writes no revision and no
// audit entry and says unchanged.
func TestAddWithoutIDAndAgain(t *testing.T) {
	t.Parallel()
	e := newAuditEnv(t)
	args := []string{"schedule", "add", "--workflow", "cleanup", "--every", "1h", "--input", `{"olderThanDays":30}`}
	code, out, errOut := e.run(args...)
	want := kvstore.DefaultKey(kvstore.Spec{Workflow: "cleanup", Every: "1h", Input: json.RawMessage(`{"olderThanDays":30}`)})
	if code != ExitOK || out != "schedule "+want+" saved (revision 1): every 1h -> sched.fire.cleanup."+want+"\n" {
		t.Fatalf("add without --id: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	entries := e.auditEntries()
	code, out, errOut = e.run(args...)
	if code != ExitOK || out != "schedule "+want+" unchanged (revision 1): every 1h -> sched.fire.cleanup."+want+"\n" {
		t.Fatalf("the same add again: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if n := e.auditEntries(); n != entries {
		t.Fatalf("the unchanged add wrote %d audit entries", n-entries)
	}
	got, err := e.store.GetSpec(context.Background(), want)
	if err != nil || got.Revision != 1 {
		t.Fatalf("spec after two adds: revision %d, %v", got.Revision, err)
	}
	// JSON says so too; another description is not taken silently, and
	// replaces the schedule in place with --replace.
	code, out, _ = e.run(append(args, "--json")...)
	var res struct {
		ID        string `json:"id"`
		Revision  uint64 `json:"revision"`
		Unchanged bool   `json:"unchanged"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil || res.ID != want || !res.Unchanged || res.Revision != 1 {
		t.Fatalf("--json: exit %d, %s", code, out)
	}
	if code, _, errOut = e.run(append(args, "--description", "weekly clean")...); code != ExitConflict || !strings.Contains(errOut, `would change description (none) -> "weekly clean"`) {
		t.Fatalf("a changed description without --replace: exit %d, %q", code, errOut)
	}
	if code, out, _ = e.run(append(args, "--description", "weekly clean", "--replace")...); code != ExitOK || !strings.Contains(out, want+" saved (revision 2)") ||
		!strings.Contains(out, `description: (none) -> "weekly clean"`) {
		t.Fatalf("a changed description: exit %d, %q", code, out)
	}
}

// TestMessagesNameTheThingAndTheFlag: one mistake, one message, the same
// as the API's.
func TestMessagesNameTheThingAndTheFlag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, verb := range []string{"get", "rm", "pause", "resume", "trigger", "skip"} {
		code, out, errOut := e.run("schedule", verb, "nosuchid")
		if code != ExitNotFound || errOut != "scheduler: not found: schedule \"nosuchid\"\n" || out != "" {
			t.Errorf("schedule %s nosuchid: exit %d, stderr %q", verb, code, errOut)
		}
	}
	code, _, errOut := e.run("schedule", "backfill", "nosuchid", "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z")
	if code != ExitNotFound || errOut != "scheduler: not found: schedule \"nosuchid\"\n" {
		t.Errorf("backfill nosuchid: exit %d, stderr %q", code, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no recurrence", nil, "scheduler: give exactly one of --cron, --every, --daily-at, --at and --business-day (got none)\n"},
		{"two recurrences", []string{"--every", "5s", "--cron", "* * * * *"}, "scheduler: give exactly one of --cron, --every, --daily-at, --at and --business-day (got --cron and --every)\n"},
	} {
		code, _, errOut := e.run(append([]string{"schedule", "add", "--workflow", "w"}, tc.args...)...)
		if code != ExitInvalid || errOut != tc.want {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, code, errOut, tc.want)
		}
	}
	code, _, errOut = e.run("schedule", "add", "--workflow", "w", "--cron", "0 25 * * *")
	if code != ExitInvalid || !strings.HasPrefix(errOut, "scheduler: --cron: invalid cron") || strings.Contains(errOut, "cronx:") {
		t.Errorf("bad cron: exit %d, stderr %q", code, errOut)
	}
}

// TestAuditVerifyJSONIsSnakeCase: audit verify --json has the keys every
// other JSON of the CLI has.
func TestAuditVerifyJSONIsSnakeCase(t *testing.T) {
	t.Parallel()
	e := newAuditEnv(t)
	if code, _, errOut := e.run("schedule", "add", "--id", "a", "--workflow", "w", "--every", "1h"); code != ExitOK {
		t.Fatal(errOut)
	}
	code, out, errOut := e.run("audit", "verify", "--json", "--audit-key-file", e.keyFile)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"from", "to", "entries", "broken", "broken_seq"} {
		if _, ok := m[k]; !ok {
			t.Errorf("no key %q in %s", k, out)
		}
	}
	checkSnakeCase(t, "audit verify", m)
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// checkSnakeCase fails for a key of a decoded JSON value that is not
// snake_case, skipping the values users write (input, payload, calendars).
func checkSnakeCase(t *testing.T, what string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !snake.MatchString(k) {
				t.Errorf("%s: key %q is not snake_case", what, k)
			}
			switch k {
			case "input", "payload", "calendar_inline", "instances":
				continue // the user's keys, or instance ids
			}
			checkSnakeCase(t, what, e)
		}
	case []any:
		for _, e := range x {
			checkSnakeCase(t, what, e)
		}
	}
}

// TestJSONOutputTypesAreSnakeCase: every type the CLI prints as JSON has
// a snake_case JSON name on every field, down through its fields' types.
func TestJSONOutputTypesAreSnakeCase(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map || ty.Kind() == reflect.Array {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] || ty.PkgPath() == "time" {
			return
		}
		seen[ty] = true
		for i := range ty.NumField() {
			f := ty.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				walk(path, f.Type)
				continue
			}
			if name == "" || !snake.MatchString(name) {
				t.Errorf("%s.%s: JSON name %q is not snake_case", path, f.Name, name)
			}
			walk(path+"."+f.Name, f.Type)
		}
	}
	for _, v := range []any{admin.ScheduleInfo{}, admin.Page[admin.ScheduleInfo]{}, admin.StatusPage{}, admin.Page[admin.HistoryItem]{},
		admin.PutResponse{}, admin.Error{}, admin.AccountPage{}, audit.Report{}, kvstore.Timer{}, kvstore.Event{}, bench.Report{}} {
		ty := reflect.TypeOf(v)
		walk(ty.String(), ty)
	}
}

// TestGetShowsEverySpecField: the human schedule get shows every field a
// spec sets, named as in its JSON; a field added to kvstore.Spec shows
// without anyone remembering it.
func TestGetShowsEverySpecField(t *testing.T) {
	at := time.Date(2030, 1, 1, 9, 0, 0, 0, time.UTC)
	spec := kvstore.Spec{ID: "x", Workflow: "w", Cron: "0 9 * * *", Dialect: "standard", DomDow: "and", DSTGap: "skip", DSTOverlap: "once",
		Every: "1h", Align: kvstore.AlignEpoch, Anchor: &at, Phase: "15m", At: &at, Start: &at, End: &at, Limit: 5, TZ: "Europe/Paris",
		Input: json.RawMessage(`{"a":1}`), Calendar: "us", CalendarInline: json.RawMessage(`{"zone":"UTC"}`),
		HolidayRoll: "skip", BusinessHoursOnly: true, BusinessDay: 2, Time: "10:00", Misfire: "fire_all", CatchupWindow: "1h",
		MisfireThreshold: "5s", Overlap: "skip", CompletionTimeout: "5m", Jitter: "30s", Description: "d", Static: "f.yaml",
		Labels: map[string]string{"team": "billing"},
		Trace:  &kvstore.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	v := reflect.ValueOf(spec)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test's spec leaves %s unset: set it", v.Type().Field(i).Name)
		}
	}
	var buf bytes.Buffer
	printView(&buf, scheduleView{ID: "x", Revision: 3, Spec: spec})
	out := buf.String()
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `:\s+\S`).MatchString(out) {
			t.Errorf("schedule get does not show %s:\n%s", name, out)
		}
	}
}

// TestGetShowsBusinessHoursAndTheMove: the case, through the CLI
// against a real server: business_hours_only and why the next slot moved.
func TestGetShowsBusinessHoursAndTheMove(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if code, _, errOut := e.run("schedule", "add", "--id", "bho", "--workflow", "w", "--cron", "0 7 * * *", "--tz", "Europe/Paris", "--business-hours-only"); code != ExitOK {
		t.Fatal(errOut)
	}
	nominal := time.Date(2030, 1, 7, 6, 0, 0, 0, time.UTC)
	st := kvstore.State{Plan: "p", Next: nominal.Add(2 * time.Hour), NextNominal: nominal, NextReason: "outside working hours",
		Claim: &kvstore.Claim{Slot: nominal.Add(-22 * time.Hour), Owner: "i1", Reason: "moved", Nominal: nominal.Add(-24 * time.Hour), Note: "outside working hours"}}
	if _, err := e.store.CreateState(context.Background(), "bho", st); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("schedule", "get", "bho")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	for _, want := range []string{"business_hours_only:", "true", "moved from 2030-01-07T07:00:00+01:00: outside working hours",
		"moved from 2030-01-06T07:00:00+01:00: outside working hours"} {
		if !strings.Contains(out, want) {
			t.Errorf("schedule get does not show %q:\n%s", want, out)
		}
	}
}

// TestStaticThroughTheCLI: a bad --schedules file stops run with exit 2
// naming the file, the entry and the field, before anything is written;
// schedule add and rm of a static schedule are refused naming its file,
// pause and trigger work; --events takes only event kinds.
func TestStaticThroughTheCLI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "billing.yaml")
	content := "schedules:\n  - {id: ok, workflow: w, cron: \"0 9 * * *\"}\n  - {id: broken, workflow: w, cron: \"0 25 * * *\"}\n"
	if err := os.WriteFile(bad, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := e.run("run", "--schedules", bad)
	want := "scheduler: --schedules " + bad + `: entry 2 (id "broken"): invalid cron "0 25 * * *"`
	if code != ExitInvalid || !strings.HasPrefix(errOut, want) {
		t.Fatalf("run with a bad file: exit %d, stderr %q, want %q...", code, errOut, want)
	}
	if n := e.specCount(); n != 0 {
		t.Fatalf("%d specs written", n)
	}
	code, _, errOut = e.run("run", "--events", "default,fird")
	if code != ExitInvalid || !strings.Contains(errOut, `--events: invalid events "fird": not an event kind`) {
		t.Fatalf("--events with a typo: exit %d, stderr %q", code, errOut)
	}

	set := jsstore.StaticSet{Source: "billing.yaml", Schedules: []jsstore.StaticSchedule{{ID: "invoice", Spec: kvstore.Spec{Workflow: "invoice", Cron: "0 9 1 * *"}}}}
	if _, err := e.store.ApplyStatic(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	refusal := "scheduler: schedule \"invoice\" is static: declared in billing.yaml (scheduler run --schedules or client.Static); change it there\n"
	for _, args := range [][]string{
		{"schedule", "add", "--id", "invoice", "--workflow", "invoice", "--cron", "0 10 1 * *"},
		{"schedule", "rm", "invoice"},
	} {
		if code, _, errOut := e.run(args...); code != ExitInvalid || errOut != refusal {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	for _, args := range [][]string{{"schedule", "pause", "invoice"}, {"schedule", "resume", "invoice"}, {"schedule", "trigger", "invoice"}, {"schedule", "skip", "invoice"}} {
		if code, _, errOut := e.run(args...); code != ExitOK {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, out, _ := e.run("schedule", "get", "invoice"); code != ExitOK || !regexp.MustCompile(`(?m)^static:\s+billing.yaml$`).MatchString(out) {
		t.Errorf("schedule get does not show the source:\n%s", out)
	}
}

// TestImportWithoutID: an import item without an id gets the content
// hash, as schedule add does.
func TestImportWithoutID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "specs.jsonl")
	if err := os.WriteFile(file, []byte(`{"spec":{"workflow":"cleanup","every":"1h","input":{"olderThanDays":30}}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run("schedule", "import", file); code != ExitOK {
		t.Fatalf("import: %s", errOut)
	}
	id := kvstore.DefaultKey(kvstore.Spec{Workflow: "cleanup", Every: "1h", Input: json.RawMessage(`{"olderThanDays":30}`)})
	if _, err := e.store.GetSpec(context.Background(), id); err != nil {
		t.Fatalf("no schedule %s: %v", id, err)
	}
}
