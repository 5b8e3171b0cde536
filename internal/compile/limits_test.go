package compile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/compile"
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
		{"inline calendar over the cap", `{"workflow":"w","every":"1m","calendar_inline":{"zone":"UTC","x":"` + over(kvstore.MaxCalendarBytes) + `"}}`, "calendar_inline"},
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

// TestPlanLeavesLabelsOut: a labels change is a change of the spec
// (SameSpec) but not of its plan, so the schedule keeps its cadence.
func TestPlanLeavesLabelsOut(t *testing.T) {
	a := kvstore.Spec{Workflow: "w", Cron: "0 9 * * *", TZ: "Europe/Paris"}
	b := a
	b.Labels = map[string]string{"team": "billing"}
	if compile.Plan(a) != compile.Plan(b) {
		t.Errorf("Plan changes with the labels: %q vs %q", compile.Plan(a), compile.Plan(b))
	}
	if kvstore.SameSpec(a, b) || kvstore.DefaultKey(a) != kvstore.DefaultKey(b) {
		t.Error("labels: want another spec with the same content key")
	}
}
