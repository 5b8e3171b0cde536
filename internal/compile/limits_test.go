package compile_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/specwrite"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestSpecLimits: a spec over a cap, or with a key given twice, is
// refused naming the field, whether it comes through the API (kvstore.DecodeSpec
// then Validate) or is read from the bucket by the engine (the same two).
func TestSpecLimits(t *testing.T) {
	over := func(n int) string { return strings.Repeat("x", n+1) }
	tests := []struct {
		name, doc, field string
	}{
		{"input at the cap", `{"workflow":"w","every":"1m","input":"` + strings.Repeat("x", kvstore.MaxInputBytes-2) + `"}`, ""},
		{"input over the cap", `{"workflow":"w","every":"1m","input":"` + over(kvstore.MaxInputBytes) + `"}`, "input"},
		{"description over the cap", `{"workflow":"w","every":"1m","description":"` + over(kvstore.MaxNoteBytes) + `"}`, "description"},
		{"cron over the cap", `{"workflow":"w","cron":"` + over(kvstore.MaxFieldBytes) + `"}`, "cron"},
		{"inline calendar over the cap", `{"workflow":"w","every":"1m","calendar_inline":{"zone":"UTC","x":"` + over(calendar.MaxJSONBytes) + `"}}`, "calendar_inline"},
		{"labels", `{"workflow":"w","every":"1m","labels":{"team":"billing","tier":""}}`, ""},
		{"a label value with a space", `{"workflow":"w","every":"1m","labels":{"team":"bil ling"}}`, "labels.team"},
		{"a label key with a colon", `{"workflow":"w","every":"1m","labels":{"te:am":"x"}}`, "labels.te:am"},
		{"labels not an object", `{"workflow":"w","every":"1m","labels":["team"]}`, "labels"},
		{"duplicate label", `{"workflow":"w","every":"1m","labels":{"team":"a","team":"b"}}`, "labels"},
		{"duplicate field", `{"workflow":"a","workflow":"b","every":"1m"}`, "workflow"},
		{"duplicate key in the input", `{"workflow":"w","every":"1m","input":{"a":{"b":1,"b":2}}}`, "input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := kvstore.DecodeSpec([]byte(tc.doc))
			if err == nil {
				err = compile.Validate(s, "x", nil)
			}
			var fe *kvstore.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field == "":
			case !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, kvstore.ErrInvalid):
				t.Fatalf("err %v, want a field error on %s", err, tc.field)
			case len(err.Error()) > 300:
				t.Fatalf("the message repeats the value: %d bytes", len(err.Error()))
			}
		})
	}
}

// TestJitterOffset: the offset is FNV-1a of the slot id modulo the
// jitter's milliseconds, the same for every caller, within [0, jitter),
// spread over it, and free of allocations.
func TestJitterOffset(t *testing.T) {
	slot := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	h := fnv.New64a()
	h.Write([]byte(kvstore.SlotID("nightly", slot)))
	if got, want := compile.JitterOffset("nightly", slot, time.Hour), time.Duration(h.Sum64()%3_600_000)*time.Millisecond; got != want {
		t.Fatalf("offset %v, want FNV-1a of the slot id modulo the jitter: %v", got, want)
	}
	if got := compile.JitterOffset("nightly", slot, 0); got != 0 {
		t.Fatalf("no jitter: offset %v", got)
	}
	const jitter = 10 * time.Second
	var buckets [10]int
	for i := range 10_000 {
		off := compile.JitterOffset(fmt.Sprintf("s-%d", i%7), slot.Add(time.Duration(i)*time.Minute), jitter)
		if off < 0 || off >= jitter || off%time.Millisecond != 0 {
			t.Fatalf("offset %v outside [0, %v) or not whole milliseconds", off, jitter)
		}
		buckets[off/time.Second]++
	}
	for i, n := range buckets {
		if n < 800 || n > 1200 { // 1,000 expected in each second
			t.Errorf("second %d of the jitter holds %d of 10,000 offsets", i, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { compile.JitterOffset("nightly", slot, jitter) }); n != 0 {
		t.Errorf("JitterOffset allocates %v times", n)
	}
}

// TestJitterField: a spec's jitter is a duration from 1ms to 24h, in the
// duration grammar; the error names the field.
func TestJitterField(t *testing.T) {
	for v, ok := range map[string]bool{"30s": true, "2 minutes": true, "24h": true, "1ms": true, "0s": false, "25h": false, "soon": false, "500us": false} {
		c, err := compile.Compile(kvstore.Spec{Workflow: "w", Every: "1h", Jitter: v}, "s", nil, nil)
		var fe *kvstore.FieldError
		switch {
		case ok && err != nil:
			t.Errorf("jitter %q refused: %v", v, err)
		case ok && c.Policy.Jitter <= 0:
			t.Errorf("jitter %q compiled to %v", v, c.Policy.Jitter)
		case !ok && (!errors.As(err, &fe) || fe.Field != "jitter"):
			t.Errorf("jitter %q: %v, want a field error on jitter", v, err)
		}
	}
}

// TestPlanLeavesLabelsOut: a labels change is a change of the spec
// (specwrite.Same) but not of its plan, so the schedule keeps its cadence.
func TestPlanLeavesLabelsOut(t *testing.T) {
	a := kvstore.Spec{Workflow: "w", Cron: "0 9 * * *", TZ: "Europe/Paris"}
	b := a
	b.Labels = map[string]string{"team": "billing"}
	if compile.Plan(a) != compile.Plan(b) {
		t.Errorf("Plan changes with the labels: %q vs %q", compile.Plan(a), compile.Plan(b))
	}
	if specwrite.Same(a, b) || kvstore.DefaultKey(a) != kvstore.DefaultKey(b) {
		t.Error("labels: want another spec with the same content key")
	}
}
