package compile_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A recurring schedule that its calendar leaves no slot within ten years is
// refused at registration, naming the calendar and the rule; one that
// still fires somewhere is accepted.
func TestNeverFiringByCalendarIsRefused(t *testing.T) {
	allYear := `{"zone":"Europe/Paris","holidays":[{"name":"Closed","from":"01-01","to":"12-31"}]}`
	noWork := `{"zone":"Europe/Paris","hours":{}}`
	mostYear := `{"zone":"Europe/Paris","holidays":[{"name":"Closed","from":"01-01","to":"12-30"}]}`
	tests := []struct {
		name  string
		spec  kvstore.Spec
		field string // "" = accepted
		why   string
	}{
		{"holidays cover the year", kvstore.Spec{Cron: "0 9 * * *", CalendarInline: json.RawMessage(allYear)}, "calendar_inline", `holiday "Closed"`},
		{"business day on a calendar without working days", kvstore.Spec{BusinessDay: 2, CalendarInline: json.RawMessage(noWork)}, "calendar_inline", "no business day 2"},
		{"interval on a closed calendar", kvstore.Spec{Every: "1h", CalendarInline: json.RawMessage(allYear), HolidayRoll: "next_business_day"}, "calendar_inline", ""},
		{"one day a year is left", kvstore.Spec{Cron: "0 9 * * *", CalendarInline: json.RawMessage(mostYear)}, "", ""},
		{"rolled to the previous business day still fires", kvstore.Spec{Cron: "0 9 15 * *", CalendarInline: json.RawMessage(mostYear), HolidayRoll: "previous_business_day"}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Workflow = "wf"
			if _, err := compile.Compile(tc.spec, "s", nil, nil); err != nil {
				t.Fatal(err)
			}
			_, err := compile.CheckRecord(tc.spec, "s", nil, nil, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
			var fe *kvstore.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("refused a schedule that fires: %v", err)
			case tc.field == "":
			case !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), "never fires") || !strings.Contains(err.Error(), tc.why):
				t.Fatalf("got %v; want a never-fires error on %s naming %q", err, tc.field, tc.why)
			}
		})
	}
}

// Through the store: a named calendar that removes every occurrence makes
// PutSpec refuse the schedule, and nothing is written.
func TestPutSpecRefusesNeverFiringCalendar(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, store := srv.Store(t)
	ctx := context.Background()
	if _, err := store.PutCalendar(ctx, "closed", []byte(`{"zone":"UTC","holidays":[{"name":"Always closed","from":"01-01","to":"12-31"}]}`)); err != nil {
		t.Fatal(err)
	}
	_, err := store.PutSpec(ctx, "never", kvstore.Spec{Workflow: "wf", Cron: "0 9 * * 1-5", Calendar: "closed"})
	var fe *kvstore.FieldError
	if !errors.As(err, &fe) || fe.Field != "calendar" || fe.Value != "closed" || !strings.Contains(err.Error(), `"Always closed"`) {
		t.Fatalf("PutSpec: %v; want a never-fires error naming calendar closed and its rule", err)
	}
	if _, err := store.GetSpec(ctx, "never"); !errors.Is(err, kvstore.ErrNotFound) {
		t.Fatalf("the refused spec was written: %v", err)
	}
}
