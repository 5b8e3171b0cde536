package jsstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func patchOf(t *testing.T, doc string) map[string]json.RawMessage {
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPatchSpecChangesOnlyTheGivenFields: a patch keeps every field it
// does not name (the zone and the input the README's replace dropped),
// removes those set to null, and swaps a recurrence with its options.
func TestPatchSpecChangesOnlyTheGivenFields(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	store := newStore(t, js)
	ctx := context.Background()
	spec := kvstore.Spec{Workflow: "report", Cron: "0 2 * * *", TZ: "Europe/Paris", DSTGap: "skip",
		Input: json.RawMessage(`{"format":"pdf"}`), Description: "nightly"}
	rev, err := store.PutSpec(ctx, "nightly", spec)
	if err != nil {
		t.Fatal(err)
	}

	res, err := store.PatchSpec(ctx, "nightly", patchOf(t, `{"cron":"0 3 * * *","description":null}`), jsstore.SaveOptions{IfRevision: rev})
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.GetSpec(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != res.Revision || got.Spec.Cron != "0 3 * * *" || got.Spec.TZ != "Europe/Paris" || got.Spec.DSTGap != "skip" ||
		string(got.Spec.Input) != `{"format":"pdf"}` || got.Spec.Description != "" {
		t.Fatalf("after the patch: %+v (revision %d, reply %d)", got.Spec, got.Revision, res.Revision)
	}
	if res.Previous == nil || res.Previous.Cron != "0 2 * * *" {
		t.Fatalf("the reply's previous spec: %+v", res.Previous)
	}

	// A new recurrence removes the old one and its options.
	if _, err := store.PatchSpec(ctx, "nightly", patchOf(t, `{"every":"1h"}`), jsstore.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = store.GetSpec(ctx, "nightly")
	if got.Spec.Cron != "" || got.Spec.DSTGap != "" || got.Spec.Every != "1h" || got.Spec.TZ != "Europe/Paris" {
		t.Fatalf("cron -> every: %+v", got.Spec)
	}

	// A stale revision, a dry run and an unknown id write nothing.
	before := got.Revision
	if _, err := store.PatchSpec(ctx, "nightly", patchOf(t, `{"every":"2h"}`), jsstore.SaveOptions{IfRevision: rev}); !errors.Is(err, kvstore.ErrConflict) {
		t.Fatalf("a stale revision: %v, want a conflict", err)
	}
	dry, err := store.PatchSpec(ctx, "nightly", patchOf(t, `{"every":"2h"}`), jsstore.SaveOptions{DryRun: true})
	if err != nil || dry.Spec.Every != "2h" || dry.Revision != before {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if _, err := store.PatchSpec(ctx, "nope", patchOf(t, `{"every":"2h"}`), jsstore.SaveOptions{}); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("an unknown id: %v, want not found", err)
	}
	got, _ = store.GetSpec(ctx, "nightly")
	if got.Revision != before || got.Spec.Every != "1h" {
		t.Fatalf("a refused or dry patch wrote: revision %d (was %d), %+v", got.Revision, before, got.Spec)
	}

	// A patch that makes an invalid spec, or names an unknown field or
	// the id, is refused naming the field.
	for doc, field := range map[string]string{
		`{"every":"nonsense"}`: "every",
		`{"workflow":null}`:    "workflow",
		`{"id":"other"}`:       "patch",
		`{"colour":"blue"}`:    "colour",
	} {
		_, err := store.PatchSpec(ctx, "nightly", patchOf(t, doc), jsstore.SaveOptions{})
		var fe *kvstore.FieldError
		if !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("patch %s: %v, want a field error on %s", doc, err, field)
		}
	}
}

// TestCalendarZoneIsTheDefault: a spec with a calendar and no zone is
// stored in the calendar's zone; one written before the rule keeps UTC
// when registered again, and an explicit zone wins.
func TestCalendarZoneIsTheDefault(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	store := newStore(t, js)
	ctx := context.Background()
	if _, err := store.PutCalendar(ctx, "us", []byte(`{"zone":"America/New_York","holidays":[{"name":"Independence Day","date":"07-04"}]}`)); err != nil {
		t.Fatal(err)
	}
	inline := json.RawMessage(`{"zone":"Asia/Tokyo"}`)
	for _, tc := range []struct {
		id   string
		spec kvstore.Spec
		want string
	}{
		{"named", kvstore.Spec{Workflow: "pay", Cron: "0 9 * * *", Calendar: "us"}, "America/New_York"},
		{"inline", kvstore.Spec{Workflow: "pay", Cron: "0 9 * * *", CalendarInline: inline}, "Asia/Tokyo"},
		{"explicit", kvstore.Spec{Workflow: "pay", Cron: "0 9 * * *", Calendar: "us", TZ: "Europe/Paris"}, "Europe/Paris"},
		{"cron-tz", kvstore.Spec{Workflow: "pay", Cron: "CRON_TZ=Europe/Paris 0 9 * * *", Calendar: "us"}, ""},
		{"no-calendar", kvstore.Spec{Workflow: "pay", Cron: "0 9 * * *"}, ""},
		{"business-day", kvstore.Spec{Workflow: "pay", BusinessDay: 1, Time: "09:00", Calendar: "us"}, "America/New_York"},
	} {
		res, err := store.SaveSpec(ctx, tc.id, tc.spec, jsstore.SaveOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		got, _ := store.GetSpec(ctx, tc.id)
		if got.Spec.TZ != tc.want || res.Spec.TZ != tc.want {
			t.Errorf("%s: stored tz %q (reply %q), want %q", tc.id, got.Spec.TZ, res.Spec.TZ, tc.want)
		}
		// Registering the same spec again (a service's every start) is
		// unchanged.
		if again, err := store.SaveSpec(ctx, tc.id, tc.spec, jsstore.SaveOptions{}); err != nil || !again.Unchanged {
			t.Errorf("%s again: %+v, %v; want unchanged", tc.id, again, err)
		}
	}

	// A spec stored before the rule (no tz, the same calendar) keeps UTC
	// when its service registers it again; a new --tz moves it.
	legacy := kvstore.Spec{Workflow: "pay", Cron: "0 9 * * *", Calendar: "us"}
	raw, _ := legacy.Encode()
	specs, err := js.KeyValue(ctx, store.Layout().SpecsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(ctx, "legacy", raw); err != nil {
		t.Fatal(err)
	}
	res, err := store.SaveSpec(ctx, "legacy", legacy, jsstore.SaveOptions{})
	if err != nil || !res.Unchanged || res.Spec.TZ != "" {
		t.Fatalf("the legacy spec registered again: %+v, %v; want unchanged in UTC", res, err)
	}
	res, err = store.PatchSpec(ctx, "legacy", patchOf(t, `{"input":{"n":1}}`), jsstore.SaveOptions{})
	if err != nil || res.Spec.TZ != "" {
		t.Fatalf("a patch of the legacy spec: %+v, %v; want it still in UTC", res.Spec, err)
	}
}
