package specwrite_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/specwrite"
	"github.com/jetsched/jetsched/internal/testtime"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestWithAnchor: what the store writes for an every spec over the stored
// one.
func TestWithAnchor(t *testing.T) {
	now := testtime.Instant(t, "2026-03-16T09:30:15.25Z")
	first := testtime.Instant(t, "2026-03-16T09:30:15Z")
	earlier := testtime.Instant(t, "2026-01-01T10:00:00Z")
	for _, c := range []struct {
		name          string
		in            kvstore.Spec
		stored        *kvstore.Spec
		align, anchor string // anchor "" = none
	}{
		{"first write: from now, to the second", kvstore.Spec{Every: "1h"}, nil, "anchor", first.Format(time.RFC3339)},
		{"re-registration keeps the anchor", kvstore.Spec{Every: "1h"},
			&kvstore.Spec{Every: "60m", Align: "anchor", Anchor: &earlier}, "anchor", earlier.Format(time.RFC3339)},
		{"a spec from before align stays as it was", kvstore.Spec{Every: "1h"}, &kvstore.Spec{Every: "1h"}, "", ""},
		{"a changed interval starts over", kvstore.Spec{Every: "2h"},
			&kvstore.Spec{Every: "1h", Align: "anchor", Anchor: &earlier}, "anchor", first.Format(time.RFC3339)},
		{"--anchor now over an epoch spec starts over", kvstore.Spec{Every: "1h", Align: "anchor"},
			&kvstore.Spec{Every: "1h", Align: "epoch"}, "anchor", first.Format(time.RFC3339)},
		{"--anchor now keeps its own anchor", kvstore.Spec{Every: "1h", Align: "anchor"},
			&kvstore.Spec{Every: "1h", Align: "anchor", Anchor: &earlier}, "anchor", earlier.Format(time.RFC3339)},
		{"epoch is left alone", kvstore.Spec{Every: "1h", Align: "epoch"}, nil, "epoch", ""},
		{"a given anchor is left alone", kvstore.Spec{Every: "1h", Anchor: &earlier}, nil, "", earlier.Format(time.RFC3339)},
		{"a cron is left alone", kvstore.Spec{Cron: "@every 1h"}, nil, "", ""},
	} {
		got := specwrite.WithAnchor(c.in, c.stored, now)
		anchor := ""
		if got.Anchor != nil {
			anchor = got.Anchor.Format(time.RFC3339)
		}
		if got.Align != c.align || anchor != c.anchor {
			t.Errorf("%s: align %q anchor %q, want %q %q", c.name, got.Align, anchor, c.align, c.anchor)
		}
	}
}

func TestSame(t *testing.T) {
	t.Parallel()
	stored := kvstore.Spec{ID: "a", Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:00Z"), Input: json.RawMessage(`{"a":1,"b":[true]}`),
		Description: "d"}
	tests := []struct {
		name     string
		incoming kvstore.Spec
		same     bool
	}{
		{"identical", stored, true},
		{"without the id, which repeats the key", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:00Z"), Input: json.RawMessage(`{"a":1,"b":[true]}`), Description: "d"}, true},
		{"the same instant in another offset", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T01:00:00+01:00"), Input: json.RawMessage(`{"a":1,"b":[true]}`), Description: "d"}, true},
		{"the same input, spaced and reordered", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:00Z"), Input: json.RawMessage(` {"b": [true], "a": 1}`), Description: "d"}, true},
		{"another instant", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:01Z"), Input: json.RawMessage(`{"a":1,"b":[true]}`), Description: "d"}, false},
		{"another description", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:00Z"), Input: json.RawMessage(`{"a":1,"b":[true]}`)}, false},
		{"another input", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:00Z"), Input: json.RawMessage(`{"a":2,"b":[true]}`), Description: "d"}, false},
		{"static", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:00Z"), Input: json.RawMessage(`{"a":1,"b":[true]}`), Description: "d", Static: "f.yaml"}, false},
		{"labels", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:00Z"), Input: json.RawMessage(`{"a":1,"b":[true]}`), Description: "d", Labels: map[string]string{"team": "ops"}}, false},
		{"no labels, given empty", kvstore.Spec{Workflow: "w", At: testtime.Ptr("2030-01-01T00:00:00Z"), Input: json.RawMessage(`{"a":1,"b":[true]}`), Description: "d", Labels: map[string]string{}}, true},
	}
	for _, tc := range tests {
		if got := specwrite.Same(stored, tc.incoming); got != tc.same {
			t.Errorf("%s: Same = %v, want %v", tc.name, got, tc.same)
		}
	}
	// The anchor an every schedule gets at its first write is the
	// system's: a re-registration without one is the same spec, one with
	// another anchor is not.
	anchored := kvstore.Spec{Workflow: "w", Every: "7d", Anchor: testtime.Ptr("2026-03-02T08:00:00Z")}
	if !specwrite.Same(anchored, kvstore.Spec{Workflow: "w", Every: "7d"}) {
		t.Error("a re-registration without the stored anchor differs")
	}
	if specwrite.Same(anchored, kvstore.Spec{Workflow: "w", Every: "7d", Anchor: testtime.Ptr("2026-03-03T08:00:00Z")}) {
		t.Error("another anchor is the same spec")
	}
	if specwrite.Same(anchored, kvstore.Spec{Workflow: "w", Cron: "@daily"}) {
		t.Error("a cron is the same as an anchored interval")
	}
	// Every field of the spec takes part: change each in turn.
	full := fullSpec()
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "ID" || name == "Anchor" || name == "Trace" {
			continue // the id repeats the key; the anchor is tested above, the trace below
		}
		changed := full
		cv := reflect.ValueOf(&changed).Elem().Field(i)
		switch cv.Kind() {
		case reflect.String:
			cv.SetString(cv.String() + "x")
		case reflect.Int:
			cv.SetInt(cv.Int() + 1)
		case reflect.Bool:
			cv.SetBool(!cv.Bool())
		case reflect.Pointer:
			later := cv.Elem().Interface().(time.Time).Add(time.Second)
			cv.Set(reflect.ValueOf(&later))
		case reflect.Slice:
			cv.SetBytes([]byte(`{"other":1}`))
		case reflect.Map:
			cv.Set(reflect.ValueOf(map[string]string{"other": "1"}))
		default:
			t.Fatalf("field %s: kind %s not covered", name, cv.Kind())
		}
		if specwrite.Same(full, changed) {
			t.Errorf("a change of %s is not seen", name)
		}
	}
}

// TestSameIgnoresTrace: the trace context of the writer is no part of
// a schedule's identity: the same schedule registered from another trace
// (or none) is the same spec.
func TestSameIgnoresTrace(t *testing.T) {
	t.Parallel()
	a := kvstore.Spec{Workflow: "w", Cron: "@daily", Trace: &kvstore.TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	b := a
	b.Trace = &kvstore.TraceContext{TraceParent: "00-11111111111111111111111111111111-2222222222222222-01"}
	c := a
	c.Trace = nil
	for _, other := range []kvstore.Spec{b, c} {
		if !specwrite.Same(a, other) {
			t.Errorf("spec with trace %+v differs from one with %+v", a.Trace, other.Trace)
		}
	}
}

// fullSpec has every field of kvstore.Spec set (not a valid spec).
func fullSpec() kvstore.Spec {
	return kvstore.Spec{ID: "x", Workflow: "w", Cron: "0 9 * * *", Dialect: "standard", DomDow: "and", DSTGap: "skip", DSTOverlap: "once",
		Every: "1h", Anchor: testtime.Ptr("2026-01-01T00:00:00Z"), At: testtime.Ptr("2030-01-01T00:00:00Z"),
		Start: testtime.Ptr("2026-01-01T00:00:00Z"), End: testtime.Ptr("2036-01-01T00:00:00Z"), Limit: 5, TZ: "Europe/Paris",
		Input: json.RawMessage(`{"a":1}`), Calendar: "us", CalendarInline: json.RawMessage(`{"zone":"UTC"}`),
		HolidayRoll: "skip", BusinessHoursOnly: true, BusinessDay: 2, Time: "10:00", Misfire: "fire_all", CatchupWindow: "1h",
		MisfireThreshold: "5s", Overlap: "skip", CompletionTimeout: "5m", Description: "d", Static: "f.yaml",
		Labels: map[string]string{"team": "billing"}}
}
