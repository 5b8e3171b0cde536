package cronx_test

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

func TestOnce(t *testing.T) {
	at := ts(t, "2024-05-01T12:00:00.123+02:00")
	o := cronx.Once{At: at}
	tests := []struct {
		after string
		want  time.Time
	}{
		{"2024-05-01T10:00:00.122Z", at},
		{"2024-05-01T10:00:00.123Z", time.Time{}},
		{"2024-05-01T10:00:00.124Z", time.Time{}},
		{"0001-01-01T00:00:00Z", at},
	}
	for _, tt := range tests {
		got := o.Next(ts(t, tt.after))
		if !got.Equal(tt.want) || (!got.IsZero() && got.Location() != time.UTC) {
			t.Errorf("Next(%s) = %v, want %v", tt.after, got, tt.want)
		}
	}
	if got, want := o.String(), "once at 2024-05-01T10:00:00.123Z"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	var never cronx.Once
	if got := never.Next(ts(t, "0001-01-01T00:00:00Z")); !got.IsZero() {
		t.Errorf("zero Once fired at %v", got)
	}
	if never.String() != "never" {
		t.Errorf("zero Once String() = %q", never.String())
	}
}
