package adminapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestValidatorAgreesWithValidate: the catalogue's shared check gives
// compile.Validate's verdict, asked twice (the second from what it shared), for
// valid and invalid specs of every kind, with ids that pass and fail.
func TestValidatorAgreesWithValidate(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	specs := []kvstore.Spec{
		{Workflow: "w", Cron: "0 9 * * 1-5", TZ: "Europe/Paris"},
		{Workflow: "w", Cron: "0 25 * * *"},
		{Workflow: "w", Cron: "0 0 30 2 *"},
		{Workflow: "w", Cron: "H H * * *"},
		{Workflow: "w", Cron: "0 9 * * *", TZ: "Mars/Olympus"},
		{Workflow: "w", Cron: "0 9 * * *", Input: json.RawMessage(`{"a":1}`), Description: "d"},
		{Workflow: "w", Cron: "0 9 * * *", Description: strings.Repeat("d", kvstore.MaxNoteBytes+1)},
		{Workflow: "w", Cron: "0 9 * * *", Input: json.RawMessage(`"` + strings.Repeat("x", kvstore.MaxInputBytes) + `"`)},
		{Workflow: "a.b", Cron: "0 9 * * *"},
		{Workflow: "", Cron: "0 9 * * *"},
		{Workflow: "w", Cron: "0 9 * * *", ID: "other"},
		{Workflow: "w", Cron: "0 9 * * *", Calendar: "us", HolidayRoll: "sideways"},
		{Workflow: "w", BusinessDay: 2, Time: "09:00", Calendar: "us"},
		{Workflow: "w", BusinessDay: 2, Time: "25:00", Calendar: "us"},
		{Workflow: "w", Every: "1m"},
		{Workflow: "w", Every: "soon"},
		{Workflow: "w", At: &at},
		{Workflow: "w"},
		{Workflow: "w", Every: "1m", Cron: "* * * * *"},
		{Workflow: "w", Cron: strings.Repeat("1", kvstore.MaxFieldBytes+1)},
	}
	var v validator
	for _, id := range []string{"a", "b-2", "bad id", "other"} {
		for i, s := range specs {
			want := compile.Validate(s, id, nil) != nil
			for range 2 {
				if got := v.invalid(id, s); got != want {
					t.Fatalf("spec %d %+v with id %q: invalid %v, Validate says %v (%v)", i, s, id, got, want, compile.Validate(s, id, nil))
				}
			}
		}
	}
}
