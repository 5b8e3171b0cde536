package kvstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testtime"
	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// legacyKey is the key client.Schedule derived before the canonical form
// took zones and policies in: specs without them must keep it.
func legacyKey(workflow, recurrence string, input []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", workflow, recurrence)
	h.Write(input)
	return workflow + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

func TestDefaultKey(t *testing.T) {
	t.Parallel()
	base := kvstore.Spec{Workflow: "cleanup", Every: "1h", Input: json.RawMessage(`{"olderThanDays":30}`)}
	t.Run("the canonical form keeps the keys of specs without zone or policies", func(t *testing.T) {
		for _, tc := range []struct {
			spec kvstore.Spec
			text string
			in   string
		}{
			{base, "every 1h0m0s", `{"olderThanDays":30}`},
			{kvstore.Spec{Workflow: "r", Cron: "0 9 * * *"}, "cron 0 9 * * *", ""},
			{kvstore.Spec{Workflow: "r", At: testtime.Ptr("2030-01-01T01:00:00+01:00")}, "at 2030-01-01T00:00:00Z", ""},
			{kvstore.Spec{Workflow: "r", BusinessDay: 2, Time: "10:00", Calendar: "ecb"}, "business_day 2 10:00 calendar=ecb", ""},
		} {
			if got, want := kvstore.DefaultKey(tc.spec), legacyKey(tc.spec.Workflow, tc.text, []byte(tc.in)); got != want {
				t.Errorf("DefaultKey(%+v) = %s, want %s (%q)", tc.spec, got, want, tc.text)
			}
		}
	})
	t.Run("the same content gives the same key however it is written", func(t *testing.T) {
		same := []kvstore.Spec{
			{Workflow: "cleanup", Every: "60m", Input: json.RawMessage(`{ "olderThanDays" : 30 }`)},
			{Workflow: "cleanup", Every: "3600s", Input: json.RawMessage(`{"olderThanDays":30}`), Description: "the description is not content"},
			{Workflow: "cleanup", Every: "1h", Input: json.RawMessage(`{"olderThanDays":30}`), Labels: map[string]string{"team": "ops"}},
			{ID: "ignored", Workflow: "cleanup", Every: "1h", Input: json.RawMessage(`{"olderThanDays":30}`)},
			// The writer's trace context is no part of the identity.
			{Workflow: "cleanup", Every: "1h", Input: json.RawMessage(`{"olderThanDays":30}`),
				Trace: &kvstore.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
		}
		for _, s := range same {
			if kvstore.DefaultKey(s) != kvstore.DefaultKey(base) {
				t.Errorf("DefaultKey(%+v) differs from DefaultKey(%+v)", s, base)
			}
		}
		// --anchor now (align anchor, the store fills the anchor in) is
		// what no anchor means.
		if kvstore.DefaultKey(kvstore.Spec{Workflow: "cleanup", Every: "1h", Align: kvstore.AlignAnchor, Input: json.RawMessage(`{"olderThanDays":30}`)}) != kvstore.DefaultKey(base) {
			t.Error("align anchor without an anchor changes the key")
		}
		if kvstore.DefaultKey(kvstore.Spec{Workflow: "cleanup", Every: "1h", Align: kvstore.AlignEpoch, Input: json.RawMessage(`{"olderThanDays":30}`)}) == kvstore.DefaultKey(base) {
			t.Error("align epoch does not change the key")
		}
		a := kvstore.Spec{Workflow: "w", Cron: "0 9 * * *", Input: json.RawMessage(`{"b":1,"a":[1,2.50]}`)}
		b := kvstore.Spec{Workflow: "w", Cron: "0 9 * * *", Input: json.RawMessage(`{"a":[1,2.50],"b":1}`)}
		if kvstore.DefaultKey(a) != kvstore.DefaultKey(b) {
			t.Error("key order of the input changes the key")
		}
	})
	t.Run("each field of the content changes the key", func(t *testing.T) {
		seen := map[string]string{kvstore.DefaultKey(base): "base"}
		for name, mod := range map[string]func(*kvstore.Spec){
			"workflow":            func(s *kvstore.Spec) { s.Workflow = "other" },
			"every":               func(s *kvstore.Spec) { s.Every = "2h" },
			"input":               func(s *kvstore.Spec) { s.Input = json.RawMessage(`{"olderThanDays":31}`) },
			"no input":            func(s *kvstore.Spec) { s.Input = nil },
			"tz":                  func(s *kvstore.Spec) { s.TZ = "Europe/Paris" },
			"anchor":              func(s *kvstore.Spec) { s.Anchor = testtime.Ptr("2026-01-01T00:00:00Z") },
			"start":               func(s *kvstore.Spec) { s.Start = testtime.Ptr("2026-01-01T00:00:00Z") },
			"end":                 func(s *kvstore.Spec) { s.End = testtime.Ptr("2036-01-01T00:00:00Z") },
			"limit":               func(s *kvstore.Spec) { s.Limit = 3 },
			"calendar":            func(s *kvstore.Spec) { s.Calendar = "us" },
			"calendar_inline":     func(s *kvstore.Spec) { s.CalendarInline = json.RawMessage(`{"zone":"UTC"}`) },
			"holiday_roll":        func(s *kvstore.Spec) { s.HolidayRoll = "next_business_day" },
			"business_hours_only": func(s *kvstore.Spec) { s.BusinessHoursOnly = true },
			"misfire":             func(s *kvstore.Spec) { s.Misfire = "fire_once" },
			"catchup_window":      func(s *kvstore.Spec) { s.CatchupWindow = "1h" },
			"misfire_threshold":   func(s *kvstore.Spec) { s.MisfireThreshold = "5s" },
			"overlap":             func(s *kvstore.Spec) { s.Overlap = "skip" },
			"completion_timeout":  func(s *kvstore.Spec) { s.CompletionTimeout = "5m" },
		} {
			s := base
			mod(&s)
			k := kvstore.DefaultKey(s)
			if prev, dup := seen[k]; dup {
				t.Errorf("%s: same key as %s", name, prev)
			}
			seen[k] = name
		}
		cron := kvstore.Spec{Workflow: "w", Cron: "0 9 * * *"}
		for name, mod := range map[string]func(*kvstore.Spec){
			"dialect": func(s *kvstore.Spec) { s.Dialect = "quartz" }, "dom_dow": func(s *kvstore.Spec) { s.DomDow = "and" },
			"dst_gap": func(s *kvstore.Spec) { s.DSTGap = "skip" }, "dst_overlap": func(s *kvstore.Spec) { s.DSTOverlap = "once" },
		} {
			s := cron
			mod(&s)
			if kvstore.DefaultKey(s) == kvstore.DefaultKey(cron) {
				t.Errorf("%s does not change the key", name)
			}
		}
	})
	t.Run("a key is a valid id", func(t *testing.T) {
		if err := kvstore.ValidateID(kvstore.DefaultKey(base)); err != nil {
			t.Fatal(err)
		}
		if k := kvstore.DefaultKey(base); !strings.HasPrefix(k, "cleanup-") || len(k) != len("cleanup-")+12 {
			t.Fatalf("key %q", k)
		}
	})
}

// recorder is an Auditor that remembers what it was told.
type recorder struct {
	mu      sync.Mutex
	actions []string
}

func (r *recorder) Intend(_ context.Context, in jsstore.Intent) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions = append(r.actions, in.Action+" "+in.Target)
	return uint64(len(r.actions)), nil
}

func (r *recorder) Abandon(context.Context, []uint64, string) error { return nil }

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.actions)
}

func TestSaveSpec(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) (*jsstore.Store, *recorder) {
		_, s := natstest.Start(t).Store(t)
		rec := &recorder{}
		s.SetAuditor(rec)
		return s, rec
	}
	ctx := context.Background()
	t.Run("registering the same spec again writes nothing", func(t *testing.T) {
		s, rec := setup(t)
		spec := kvstore.Spec{Workflow: "cleanup", Every: "1h", Input: json.RawMessage(`{"olderThanDays":30}`)}
		first, err := s.SaveSpec(ctx, "c", spec, jsstore.SaveOptions{})
		if err != nil || !first.Created || first.Unchanged {
			t.Fatalf("first save: %+v, %v", first, err)
		}
		spec.Input = json.RawMessage(`{ "olderThanDays": 30 }`)
		again, err := s.SaveSpec(ctx, "c", spec, jsstore.SaveOptions{})
		if err != nil || !again.Unchanged || again.Revision != first.Revision {
			t.Fatalf("second save: %+v, %v; want unchanged at revision %d", again, err, first.Revision)
		}
		if n := rec.count(); n != 1 {
			t.Fatalf("%d audit entries, want 1", n)
		}
		spec.Description = "now described"
		upd, err := s.SaveSpec(ctx, "c", spec, jsstore.SaveOptions{})
		if err != nil || upd.Unchanged || upd.Created || upd.Revision <= first.Revision {
			t.Fatalf("changed save: %+v, %v", upd, err)
		}
		if n := rec.count(); n != 2 {
			t.Fatalf("%d audit entries, want 2", n)
		}
	})
	t.Run("a one-shot in the past is refused unless it is the stored one", func(t *testing.T) {
		s, _ := setup(t)
		now := time.Now()
		at := now.Add(-time.Hour).UTC()
		spec := kvstore.Spec{Workflow: "w", At: &at}
		var fe *kvstore.FieldError
		if _, err := s.SaveSpec(ctx, "once", spec, jsstore.SaveOptions{Now: now}); !errors.As(err, &fe) || fe.Field != "at" {
			t.Fatalf("a new one-shot in the past: %v, want a field error on at", err)
		}
		if _, err := s.SaveSpec(ctx, "once", spec, jsstore.SaveOptions{}); err != nil { // as it stood when it was registered
			t.Fatal(err)
		}
		r, err := s.SaveSpec(ctx, "once", spec, jsstore.SaveOptions{Now: now})
		if err != nil || !r.Unchanged {
			t.Fatalf("re-registering the fired one-shot: %+v, %v; want unchanged", r, err)
		}
		other := at.Add(time.Minute)
		if _, err := s.SaveSpec(ctx, "once", kvstore.Spec{Workflow: "w", At: &other}, jsstore.SaveOptions{Now: now}); !errors.As(err, &fe) || fe.Field != "at" {
			t.Fatalf("moving it to another past time: %v, want a field error on at", err)
		}
	})
	t.Run("create, update and revisions", func(t *testing.T) {
		s, _ := setup(t)
		spec := kvstore.Spec{Workflow: "w", Cron: "0 9 * * *"}
		if _, err := s.SaveSpec(ctx, "a", spec, jsstore.SaveOptions{Update: true}); !errors.Is(err, kvstore.ErrNotFound) || usererr.Message(err) != `not found: schedule "a"` {
			t.Fatalf("update of nothing: %v", err)
		}
		r, err := s.SaveSpec(ctx, "a", spec, jsstore.SaveOptions{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveSpec(ctx, "a", spec, jsstore.SaveOptions{Create: true}); !errors.Is(err, kvstore.ErrExists) {
			t.Fatalf("create of an existing id: %v", err)
		}
		spec.TZ = "Europe/Paris"
		if _, err := s.SaveSpec(ctx, "a", spec, jsstore.SaveOptions{IfRevision: r.Revision + 5}); !errors.Is(err, kvstore.ErrConflict) ||
			usererr.Message(err) != fmt.Sprintf(`conflict: schedule "a" is at revision %d, not %d; nothing was written`, r.Revision, r.Revision+5) {
			t.Fatalf("stale revision: %v", err)
		}
		if _, err := s.SaveSpec(ctx, "a", spec, jsstore.SaveOptions{IfRevision: r.Revision}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStaticSchedules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s := natstest.Start(t).Store(t)
	set := jsstore.StaticSet{Source: "billing.yaml", Schedules: []jsstore.StaticSchedule{
		{ID: "invoice", Spec: kvstore.Spec{Workflow: "invoice", Cron: "0 9 * * *"}},
		{Spec: kvstore.Spec{Workflow: "cleanup", Every: "1h"}},
	}}
	derived := kvstore.DefaultKey(kvstore.Spec{Workflow: "cleanup", Every: "1h"})
	res, err := s.ApplyStatic(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Created, []string{"invoice", derived}) {
		t.Fatalf("created %v", res.Created)
	}
	e, err := s.GetSpec(ctx, "invoice")
	if err != nil || e.Spec.Static != "billing.yaml" {
		t.Fatalf("invoice: %+v, %v", e.Spec, err)
	}
	t.Run("dynamic writes and removals are refused, naming the file", func(t *testing.T) {
		_, err := s.PutSpec(ctx, "invoice", kvstore.Spec{Workflow: "invoice", Cron: "0 10 * * *"})
		if !errors.Is(err, kvstore.ErrStatic) || !strings.Contains(usererr.Message(err), "billing.yaml") {
			t.Fatalf("put: %v", err)
		}
		if err := s.DeleteSpec(ctx, "invoice"); !errors.Is(err, kvstore.ErrStatic) {
			t.Fatalf("delete: %v", err)
		}
		var fe *kvstore.FieldError
		if _, err := s.PutSpec(ctx, "mine", kvstore.Spec{Workflow: "w", Cron: "0 9 * * *", Static: "billing.yaml"}); !errors.As(err, &fe) || fe.Field != "static" {
			t.Fatalf("a put that claims to be static: %v", err)
		}
	})
	t.Run("another source cannot take them", func(t *testing.T) {
		other := jsstore.StaticSet{Source: "other.yaml", Schedules: []jsstore.StaticSchedule{{ID: "invoice", Spec: kvstore.Spec{Workflow: "invoice", Cron: "0 9 * * *"}}}}
		_, err := s.ApplyStatic(ctx, other)
		if !errors.Is(err, kvstore.ErrStatic) || !strings.Contains(usererr.Message(err), `other.yaml: entry 1 (id "invoice")`) {
			t.Fatalf("apply: %v", err)
		}
	})
	t.Run("the same set again writes nothing", func(t *testing.T) {
		res, err := s.ApplyStatic(ctx, set)
		if err != nil || len(res.Unchanged) != 2 || len(res.Created)+len(res.Updated)+len(res.Removed) != 0 {
			t.Fatalf("%+v, %v", res, err)
		}
	})
	t.Run("a bad entry writes nothing and names entry and field", func(t *testing.T) {
		bad := jsstore.StaticSet{Source: "billing.yaml", Schedules: []jsstore.StaticSchedule{
			{ID: "invoice", Spec: kvstore.Spec{Workflow: "invoice", Cron: "0 11 * * *"}},
			{ID: "broken", Spec: kvstore.Spec{Workflow: "b", Cron: "0 9 * * *", Calendar: "nosuch"}},
		}}
		_, err := s.ApplyStatic(ctx, bad)
		var fe *kvstore.FieldError
		if !errors.As(err, &fe) || fe.Field != "calendar" || !strings.Contains(usererr.Message(err), `billing.yaml: entry 2 (id "broken")`) {
			t.Fatalf("apply: %v", err)
		}
		if e, _ := s.GetSpec(ctx, "invoice"); e.Spec.Cron != "0 9 * * *" {
			t.Fatalf("entry 1 was written: %+v", e.Spec)
		}
	})
	t.Run("a schedule that leaves the set is removed", func(t *testing.T) {
		if _, err := s.PutSpec(ctx, "dynamic", kvstore.Spec{Workflow: "d", Cron: "0 9 * * *"}); err != nil {
			t.Fatal(err)
		}
		smaller := jsstore.StaticSet{Source: "billing.yaml", Schedules: set.Schedules[:1]}
		res, err := s.ApplyStatic(ctx, smaller)
		if err != nil || !reflect.DeepEqual(res.Removed, []string{derived}) {
			t.Fatalf("%+v, %v", res, err)
		}
		if _, err := s.GetSpec(ctx, derived); !errors.Is(err, kvstore.ErrNotFound) {
			t.Fatalf("removed schedule: %v", err)
		}
		if _, err := s.GetSpec(ctx, "dynamic"); err != nil {
			t.Fatalf("a dynamic schedule was touched: %v", err)
		}
	})
}

// TestSpecTraceValidated: a spec's trace must hold a W3C traceparent; the
// error names trace.traceparent.
func TestSpecTraceValidated(t *testing.T) {
	t.Parallel()
	s := kvstore.Spec{Workflow: "w", Cron: "@daily", Trace: &kvstore.TraceContext{TraceParent: "00-not-a-trace-01"}}
	var fe *kvstore.FieldError
	if err := compile.Validate(s, "k", nil); !errors.As(err, &fe) || fe.Field != "trace.traceparent" {
		t.Fatalf("Validate = %v, want a FieldError on trace.traceparent", err)
	}
	s.Trace.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if err := compile.Validate(s, "k", nil); err != nil {
		t.Fatalf("Validate with a valid traceparent: %v", err)
	}
}
