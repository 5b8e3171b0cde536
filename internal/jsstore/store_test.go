package jsstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsperm"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/slotid"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDecodeAndValidateSpec(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		json  string
		field string // "" = valid
	}{
		{"cron", "a", `{"workflow":"wf","cron":"0 9 * * 1-5","tz":"Europe/Paris"}`, ""},
		{"six fields", "a", `{"workflow":"wf","cron":"*/10 * * * * *"}`, ""},
		{"every with anchor", "a", `{"workflow":"wf","every":"90m","anchor":"2026-01-01T00:15:00Z"}`, ""},
		{"every in words", "a", `{"workflow":"wf","every":"1 day 3 hours"}`, ""},
		{"every in milliseconds", "a", `{"workflow":"wf","every":"3600000"}`, ""},
		{"align anchor", "a", `{"workflow":"wf","every":"7d","tz":"Europe/Paris","align":"anchor","anchor":"2026-03-16T09:00:00+01:00"}`, ""},
		{"align epoch with a phase", "a", `{"workflow":"wf","every":"30m","align":"epoch","phase":"15m"}`, ""},
		{"align epoch, whole days", "a", `{"workflow":"wf","every":"1d","tz":"Europe/Paris","align":"epoch","phase":"9h"}`, ""},
		{"bad align", "a", `{"workflow":"wf","every":"1h","align":"utc"}`, "align"},
		{"at", "a", `{"workflow":"wf","at":"2030-01-01T00:00:00Z","input":[1,2]}`, ""},
		{"not json", "a", `cron: daily`, "spec"},
		{"unknown field", "a", `{"workflow":"wf","crom":"* * * * *"}`, "crom"},
		{"wrong type", "a", `{"workflow":"wf","every":5}`, "every"},
		{"trailing data", "a", `{"workflow":"wf","every":"5s"} {}`, "spec"},
		{"no workflow", "a", `{"every":"5s"}`, "workflow"},
		{"id mismatch", "a", `{"id":"b","workflow":"wf","every":"5s"}`, "id"},
		{"bad key", "a.b", `{"workflow":"wf","every":"5s"}`, "id"},
		{"no recurrence", "a", `{"workflow":"wf"}`, "recurrence"},
		{"two recurrences", "a", `{"workflow":"wf","every":"5s","cron":"* * * * *"}`, "recurrence"},
		{"malformed cron", "a", `{"workflow":"wf","cron":"* * *"}`, "cron"},
		{"never fires", "a", `{"workflow":"wf","cron":"0 0 31 4,6,9,11 *"}`, "cron"},
		{"bad zone", "a", `{"workflow":"wf","cron":"* * * * *","tz":"Nowhere/Land"}`, "tz"},
		{"bad every", "a", `{"workflow":"wf","every":"10ns"}`, "every"},
		{"cron with policies", "a", `{"workflow":"wf","cron":"30 2 * * *","tz":"America/New_York","dst_gap":"shift","dst_overlap":"twice"}`, ""},
		{"quartz", "a", `{"workflow":"wf","cron":"0 0 12 ? * 6#3","dialect":"quartz"}`, ""},
		{"cron every", "a", `{"workflow":"wf","cron":"@every 90m"}`, ""},
		{"hashed", "a", `{"workflow":"wf","cron":"H H * * *"}`, ""},
		{"bad gap", "a", `{"workflow":"wf","cron":"* * * * *","dst_gap":"later"}`, "dst_gap"},
		{"bad overlap", "a", `{"workflow":"wf","cron":"* * * * *","dst_overlap":"x"}`, "dst_overlap"},
		{"bad dialect", "a", `{"workflow":"wf","cron":"* * * * *","dialect":"x"}`, "dialect"},
		{"dom_dow posix", "a", `{"workflow":"wf","cron":"0 0 */10 * SUN","dom_dow":"posix"}`, ""},
		{"dom_dow and", "a", `{"workflow":"wf","cron":"0 0 13 * FRI","dom_dow":"and"}`, ""},
		{"dom_dow cronie", "a", `{"workflow":"wf","cron":"0 0 13 * FRI","dom_dow":"cronie"}`, ""},
		{"bad dom_dow", "a", `{"workflow":"wf","cron":"* * * * *","dom_dow":"or"}`, "dom_dow"},
		{"dom_dow on an interval", "a", `{"workflow":"wf","every":"5s","dom_dow":"posix"}`, "dom_dow"},
		{"peer forms", "a", `{"workflow":"wf","cron":"0 22-2/2 29-L,L-2W,W15 NOV-FEB friday-MON"}`, ""},
		{"gronx alias", "a", `{"workflow":"wf","cron":"@15minutes"}`, ""},
		{"ambiguous # list", "a", `{"workflow":"wf","cron":"0 0 * * 5,6#3"}`, "cron"},
		{"ambiguous L list", "a", `{"workflow":"wf","cron":"0 0 12 ? * SAT,SUN,L","dialect":"quartz"}`, "cron"},
		{"bad prefix zone", "a", `{"workflow":"wf","cron":"CRON_TZ=Nowhere/X * * * *"}`, "cron"},
		{"bounded", "a", `{"workflow":"wf","every":"1h","start":"2026-01-01T00:00:00Z","end":"2027-01-01T00:00:00Z","limit":10}`, ""},
		{"limit without start", "a", `{"workflow":"wf","every":"1h","limit":10}`, "limit"},
		{"inline calendar", "a", `{"workflow":"wf","cron":"0 9 * * *","calendar_inline":{"zone":"Europe/Paris","holidays":[{"name":"Bastille Day","date":"07-14"}]},"holiday_roll":"next_business_day"}`, ""},
		{"bad inline calendar", "a", `{"workflow":"wf","cron":"0 9 * * *","calendar_inline":{"zone":"Nowhere"}}`, "calendar_inline"},
		{"named and inline", "a", `{"workflow":"wf","cron":"0 9 * * *","calendar":"x","calendar_inline":{"zone":"UTC"}}`, "calendar"},
		{"bad roll", "a", `{"workflow":"wf","cron":"0 9 * * *","calendar_inline":{"zone":"UTC"},"holiday_roll":"sideways"}`, "holiday_roll"},
		{"business hours without a calendar", "a", `{"workflow":"wf","cron":"0 2 * * *","tz":"Europe/Paris","business_hours_only":true}`, ""},
		{"business day", "a", `{"workflow":"wf","business_day":2,"time":"10:00","calendar_inline":{"zone":"Europe/Paris"}}`, ""},
		{"business day out of range", "a", `{"workflow":"wf","business_day":40}`, "business_day"},
		{"bad time", "a", `{"workflow":"wf","business_day":1,"time":"25:00"}`, "time"},
		{"time without business day", "a", `{"workflow":"wf","cron":"* * * * *","time":"10:00"}`, "time"},
		{"end before start", "a", `{"workflow":"wf","every":"1h","start":"2026-01-01T00:00:00Z","end":"2025-01-01T00:00:00Z"}`, "end"},
		// Issue 52: times outside the supported range (docs/records.md,
		// "Time range") are refused naming the field, never overflow.
		{"at past Unix ns", "a", `{"workflow":"wf","at":"2262-04-11T23:47:17Z"}`, "at"},
		{"at at the range's end", "a", `{"workflow":"wf","at":"2262-01-01T00:00:00Z"}`, "at"},
		{"at just inside the range", "a", `{"workflow":"wf","at":"2261-12-31T23:59:59Z"}`, ""},
		{"at the epoch (0 is none inside the engine)", "a", `{"workflow":"wf","at":"1970-01-01T00:00:00Z"}`, "at"},
		{"at a second after the epoch", "a", `{"workflow":"wf","at":"1970-01-01T00:00:01Z"}`, ""},
		{"at year 10000 through its offset", "a", `{"workflow":"wf","at":"9999-12-31T23:00:00-05:00"}`, "at"},
		{"at the zero time", "a", `{"workflow":"wf","at":"0001-01-01T00:00:00Z"}`, "at"},
		{"at before the epoch", "a", `{"workflow":"wf","at":"1969-12-31T23:59:59Z"}`, "at"},
		{"start past the range", "a", `{"workflow":"wf","every":"1h","start":"9999-12-31T23:00:00-05:00"}`, "start"},
		{"end past the range", "a", `{"workflow":"wf","every":"1h","end":"2300-01-01T00:00:00Z"}`, "end"},
		{"anchor past the range", "a", `{"workflow":"wf","every":"1h","anchor":"9999-12-31T23:00:00-05:00"}`, "anchor"},
		{"anchor before the range", "a", `{"workflow":"wf","every":"1h","anchor":"1600-01-01T00:00:00Z"}`, "anchor"},
		// An anchor is no slot: the epoch plus a phase spreads intervals
		// (scheduler bench's fleets do), as specs did before the range.
		{"anchor at the epoch", "a", `{"workflow":"wf","every":"1s","anchor":"1970-01-01T00:00:00Z"}`, ""},
		{"anchor at the epoch plus a phase", "a", `{"workflow":"wf","every":"1s","anchor":"1970-01-01T00:00:00.02Z"}`, ""},
		{"anchor just before the epoch", "a", `{"workflow":"wf","every":"1s","anchor":"1969-12-31T23:59:59Z"}`, "anchor"},
		{"misfire threshold of centuries", "a", `{"workflow":"wf","every":"1h","misfire_threshold":"2562047h"}`, "misfire_threshold"},
		{"catch-up window of centuries", "a", `{"workflow":"wf","every":"1h","catchup_window":"2562047h"}`, "catchup_window"},
		{"completion timeout of centuries", "a", `{"workflow":"wf","every":"1h","completion_timeout":"2562047h"}`, "completion_timeout"},
		{"catch-up window of ten years", "a", `{"workflow":"wf","every":"1h","catchup_window":"87600h"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := kvstore.DecodeSpec([]byte(tc.json))
			if err == nil {
				err = compile.Validate(spec, tc.key, nil)
			}
			if tc.field == "" {
				if err != nil {
					t.Fatalf("valid spec refused: %v", err)
				}
				return
			}
			var fe *kvstore.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, kvstore.ErrInvalid) {
				t.Fatalf("err = %v, want a *FieldError wrapping ErrInvalid", err)
			}
			if fe.Field != tc.field {
				t.Fatalf("field %q, want %q (%v)", fe.Field, tc.field, err)
			}
		})
	}
}

func TestCronErrorKeepsParseError(t *testing.T) {
	err := compile.Validate(kvstore.Spec{Workflow: "wf", Cron: "0 25 * * *"}, "a", nil)
	var pe *cronx.ParseError
	if !errors.As(err, &pe) || pe.Field != "hour" {
		t.Fatalf("err = %v, want a cronx.ParseError on the hour field", err)
	}
	if !strings.Contains(err.Error(), "cron") || !strings.Contains(err.Error(), "25") {
		t.Fatalf("message %q does not name the field and value", err)
	}
}

func TestPlanKeepsCadenceOnlyForTheSameRecurrence(t *testing.T) {
	base := kvstore.Spec{Workflow: "wf", Cron: "0 9 * * *", TZ: "Europe/Paris"}
	same := base
	same.Input, same.Description, same.Workflow = []byte(`{"x":1}`), "changed", "other"
	if compile.Plan(base) != compile.Plan(same) {
		t.Error("input, description or workflow changes must not re-plan")
	}
	// A spec written before dom_dow existed keeps its plan (and so its
	// cadence) across the upgrade.
	if got, want := compile.Plan(base), "cron 0 9 * * * tz=Europe/Paris"; got != want {
		t.Errorf("Plan() = %q, want %q", got, want)
	}
	for _, changed := range []kvstore.Spec{
		{Workflow: "wf", Cron: "0 10 * * *", TZ: "Europe/Paris"},
		{Workflow: "wf", Cron: "0 9 * * *", TZ: "Europe/London"},
		{Workflow: "wf", Every: "1d"},
		{Workflow: "wf", Cron: "0 9 * * *", TZ: "Europe/Paris", DomDow: "posix"},
		{Workflow: "wf", Cron: "0 9 * * *", TZ: "Europe/Paris", DSTOverlap: "once"},
	} {
		if compile.Plan(changed) == compile.Plan(base) {
			t.Errorf("%+v has the same plan as %+v", changed, base)
		}
	}
}

// TestCompileAppliesDomDow: the spec's dom_dow reaches the schedule.
func TestCompileAppliesDomDow(t *testing.T) {
	after := time.Date(2026, 2, 28, 0, 0, 0, 0, time.UTC)
	for rule, want := range map[string]string{
		"":       "2026-05-31T00:00:00Z", // cronie: "*/10" ANDs with Sunday
		"cronie": "2026-05-31T00:00:00Z",
		"and":    "2026-05-31T00:00:00Z",
		"posix":  "2026-03-08T00:00:00Z", // the 1st, 11th, ... or Sundays
	} {
		c, err := compile.Compile(kvstore.Spec{Workflow: "wf", Cron: "0 0 */10 * SUN", DomDow: rule}, "a", nil, nil)
		if err != nil {
			t.Fatalf("dom_dow %q: %v", rule, err)
		}
		first := c.Schedule.Next(after) // Sunday 2026-03-01 under every rule
		if got := c.Schedule.Next(first).Format(time.RFC3339); got != want {
			t.Errorf("dom_dow %q: second fire %s, want %s", rule, got, want)
		}
	}
}

func TestSlotID(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 500_000_000, time.FixedZone("CET", 3600))
	id := kvstore.SlotID("billing-daily", at)
	if id != "billing-daily.1796112000500" {
		t.Fatalf("SlotID = %q", id)
	}
	sched, slot, err := kvstore.ParseSlotID(id)
	if err != nil || sched != "billing-daily" || !slot.Equal(at) {
		t.Fatalf("ParseSlotID = %q, %v, %v", sched, slot, err)
	}
	for _, bad := range []string{"", "nodot", ".123", "a.b", "a.trigger-123"} {
		if _, _, err := kvstore.ParseSlotID(bad); err == nil {
			t.Errorf("ParseSlotID(%q) accepted", bad)
		}
	}
	// Any slot id: a regular slot's, a trigger's, a backfill's.
	for _, c := range []struct{ id, kind string }{{id, ""}, {slotid.Extra("billing-daily", "trigger", at), "trigger"},
		{slotid.Extra("billing-daily", "backfill", at), "backfill"}} {
		sched, kind, slot, err := slotid.ParseAny(c.id)
		if err != nil || sched != "billing-daily" || kind != c.kind || !slot.Equal(at) {
			t.Errorf("ParseAnySlotID(%q) = %q, %q, %v, %v", c.id, sched, kind, slot, err)
		}
	}
	for _, bad := range []string{"", "nodot", ".123", "a.b", "a.trigger-", "a.-trigger-1", "a.Trigger-1", "a.trigger-1x"} {
		if _, _, _, err := slotid.ParseAny(bad); err == nil {
			t.Errorf("ParseAnySlotID(%q) accepted", bad)
		}
	}
}

func TestLayout(t *testing.T) {
	var l kvstore.Layout
	for _, c := range [][2]string{
		{l.FireSubject("billing", "nightly"), "sched.fire.billing.nightly"},
		{l.WorkflowFires("billing"), "sched.fire.billing.>"},
		{l.ScheduleFires("nightly"), "sched.fire.*.nightly"},
		{l.LegacyFireSubject("billing"), "sched.fire.billing"},
	} {
		if c[0] != c[1] {
			t.Errorf("fire subject %q, want %q", c[0], c[1])
		}
	}
	if got := l.EventSubject(kvstore.EventInvalid, "x"); got != "sched.event.invalid.x" {
		t.Errorf("EventSubject = %q", got)
	}
	for _, c := range [][2]string{
		{l.DoneSubject("billing", "x"), "sched.done.billing.x"},
		{l.CancelSubject("billing", "x"), "sched.cancel.billing.x"},
		{l.DeadLetterSubject("billing", "x"), "sched.event.dead_letter.billing.x"},
		{l.DeadLetterSubject("billing", "wakeup.r.s.1"), "sched.event.dead_letter.billing.wakeup%2Er%2Es%2E1"},
	} {
		if c[0] != c[1] {
			t.Errorf("subject %q, want %q", c[0], c[1])
		}
	}
	if got := natsperm.Streams(kvstore.NamedLayout("acme")); !slices.Contains(got, "KV_acme_specs") || !slices.Contains(got, "ACME_FIRES") || len(got) != 9 {
		t.Errorf("Streams = %v", got)
	}
	tenant := kvstore.Layout{Prefix: "acme", FiresStream: "ACME_FIRES"}.WithDefaults()
	if tenant.FireSubjects() != "acme.fire.>" || tenant.FiresStream != "ACME_FIRES" || tenant.SpecsBucket != "sched_specs" {
		t.Errorf("tenant layout %+v", tenant)
	}
}

func TestSetupIsIdempotentAndStoreMapsConflicts(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	nc, js := srv.Connect(t)
	ctx := context.Background()
	if err := jsstore.Preflight(ctx, nc, js); err != nil {
		t.Fatalf("preflight on a JetStream server: %v", err)
	}
	for range 2 {
		if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{TickRetention: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{Replicas: 9}); err == nil {
		t.Fatal("replicas 9 accepted")
	}
	s, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	st := kvstore.State{Plan: "p", Next: time.Now().UTC()}
	rev, err := s.CreateState(ctx, "a", st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateState(ctx, "a", st); !errors.Is(err, kvstore.ErrConflict) {
		t.Fatalf("second create: %v, want ErrConflict", err)
	}
	rev2, err := s.UpdateState(ctx, "a", st, rev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateState(ctx, "a", st, rev); !errors.Is(err, kvstore.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	if err := s.DeleteState(ctx, "a", rev); !errors.Is(err, kvstore.ErrConflict) {
		t.Fatalf("stale delete: %v, want ErrConflict", err)
	}
	if err := s.DeleteState(ctx, "a", rev2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetState(ctx, "a"); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("get deleted: %v, want ErrNotFound", err)
	}
	// A deleted key can be created again.
	if _, err := s.CreateState(ctx, "a", st); err != nil {
		t.Fatalf("re-create after delete: %v", err)
	}
	if _, err := s.PutSpec(ctx, "bad", kvstore.Spec{Workflow: "wf", Cron: "nope"}); !errors.Is(err, kvstore.ErrInvalid) {
		t.Fatalf("PutSpec of an invalid spec: %v", err)
	}
	if _, err := s.GetSpec(ctx, "bad"); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("invalid spec was written: %v", err)
	}
	// Calendars: stored canonical, unknown ones refused at registration.
	if _, err := s.PutCalendar(ctx, "bad", []byte(`{"zone":"Mars/Base"}`)); !errors.Is(err, kvstore.ErrInvalid) {
		t.Fatalf("PutCalendar of a bad calendar: %v", err)
	}
	if _, err := s.GetCalendar(ctx, "bad"); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("a bad calendar was written: %v", err)
	}
	spec := kvstore.Spec{Workflow: "wf", Cron: "0 9 * * *", Calendar: "fr"}
	var fe *kvstore.FieldError
	if _, err := s.PutSpec(ctx, "uses-fr", spec); !errors.As(err, &fe) || fe.Field != "calendar" {
		t.Fatalf("PutSpec naming a missing calendar: %v", err)
	}
	if _, err := s.PutCalendar(ctx, "fr", []byte(`{"zone":"Europe/Paris"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSpec(ctx, "uses-fr", spec); err != nil {
		t.Fatal(err)
	}
	if users, err := s.CalendarUsers(ctx, "fr"); err != nil || len(users) != 1 || users[0] != "uses-fr" {
		t.Fatalf("CalendarUsers = %v, %v", users, err)
	}
	if err := s.DeleteCalendar(ctx, "fr", false); !errors.Is(err, jsstore.ErrInUse) {
		t.Fatalf("DeleteCalendar in use: %v", err)
	}
	tick := kvstore.Tick{Schedule: "a", Slot: time.UnixMilli(1_800_000_000_000).UTC(), Status: kvstore.TickDispatched}
	if err := s.PutTick(ctx, tick); err != nil {
		t.Fatal(err)
	}
	hist, err := s.History(ctx, "a")
	if err != nil || len(hist) != 1 || hist[0].Status != kvstore.TickDispatched {
		t.Fatalf("History = %+v, %v", hist, err)
	}
}

// TestNamedLayout: the default layout is the one named "sched", and a
// prefix that cannot name a bucket or a subject token is refused.
func TestNamedLayout(t *testing.T) {
	if got, want := kvstore.NamedLayout("sched"), (kvstore.Layout{}).WithDefaults(); got != want {
		t.Fatalf("NamedLayout(sched) = %+v, want the defaults %+v", got, want)
	}
	if l := kvstore.NamedLayout("acme"); l.FiresStream != "ACME_FIRES" || l.SpecsBucket != "acme_specs" || l.FireSubject("wf", "x") != "acme.fire.wf.x" {
		t.Fatalf("NamedLayout(acme) = %+v", l)
	}
	for _, bad := range []string{"", "a.b", "a b", "a*", "a>"} {
		if err := kvstore.ValidatePrefix(bad); err == nil {
			t.Errorf("ValidatePrefix(%q) accepted", bad)
		}
	}
	if err := kvstore.ValidatePrefix("tenant-1_x"); err != nil {
		t.Errorf("ValidatePrefix(tenant-1_x): %v", err)
	}
}

func TestSubjectToken(t *testing.T) {
	for in, want := range map[string]string{
		"nightly-report_2=": "nightly-report_2=",
		"a.b":               "a%2Eb",
		"*":                 "%2A",
		"x>y z":             "x%3Ey%20z",
		"50%":               "50%25",
		"":                  "%00",
		"ünïcode":           "ünïcode",
	} {
		if got := (kvstore.Layout{}).EventSubject(kvstore.EventInvalid, in); got != "sched.event.invalid."+want {
			t.Errorf("EventSubject of %q = %q, want the token %q", in, got, want)
		}
	}
	l := kvstore.Layout{}
	if got := l.EventSubject(kvstore.EventInvalid, "a.b"); got != "sched.event.invalid.a%2Eb" {
		t.Errorf("EventSubject of a dotted key: %q", got)
	}
}

// TestLayoutStreamsAreWhatSetupCreates: natsperm.Streams names exactly what
// Setup creates, since the scheduler's permission block (natsconf/) is
// built from it: a stream left out would be refused to the scheduler.
func TestLayoutStreamsAreWhatSetupCreates(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	l := kvstore.NamedLayout("acme")
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{Layout: l}); err != nil {
		t.Fatal(err)
	}
	var got []string
	names := js.StreamNames(ctx)
	for n := range names.Name() {
		got = append(got, n)
	}
	if names.Err() != nil {
		t.Fatal(names.Err())
	}
	want := natsperm.Streams(l)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Setup creates %q, natsperm.Streams names %q", got, want)
	}
	for _, b := range l.Buckets() {
		if !slices.Contains(got, "KV_"+b) {
			t.Errorf("bucket %s has no stream", b)
		}
	}
}
