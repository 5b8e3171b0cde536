package kvstore

import (
	"errors"
	"strings"
	"testing"
)

// TestSpecLimits: a spec over a cap, or with a key given twice, is
// refused naming the field, whether it comes through the API (DecodeSpec
// then Validate) or is read from the bucket by the engine (the same two).
func TestSpecLimits(t *testing.T) {
	over := func(n int) string { return strings.Repeat("x", n+1) }
	tests := []struct {
		name, doc, field string
	}{
		{"input at the cap", `{"workflow":"w","every":"1m","input":"` + strings.Repeat("x", MaxInputBytes-2) + `"}`, ""},
		{"input over the cap", `{"workflow":"w","every":"1m","input":"` + over(MaxInputBytes) + `"}`, "input"},
		{"description over the cap", `{"workflow":"w","every":"1m","description":"` + over(MaxNoteBytes) + `"}`, "description"},
		{"cron over the cap", `{"workflow":"w","cron":"` + over(MaxFieldBytes) + `"}`, "cron"},
		{"inline calendar over the cap", `{"workflow":"w","every":"1m","calendar_inline":{"zone":"UTC","x":"` + over(MaxCalendarBytes) + `"}}`, "calendar_inline"},
		{"duplicate field", `{"workflow":"a","workflow":"b","every":"1m"}`, "workflow"},
		{"duplicate key in the input", `{"workflow":"w","every":"1m","input":{"a":{"b":1,"b":2}}}`, "input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := DecodeSpec([]byte(tc.doc))
			if err == nil {
				err = s.Validate("x")
			}
			var fe *FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.field == "":
			case !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, ErrInvalid):
				t.Fatalf("err %v, want a field error on %s", err, tc.field)
			case len(err.Error()) > 300:
				t.Fatalf("the message repeats the value: %d bytes", len(err.Error()))
			}
		})
	}
}
