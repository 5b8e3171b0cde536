package calendar_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// Counting back from a deadline: 48 working hours and 3 working days
// before it, on a nine-to-six calendar.
func ExampleCalendar_AddWorkingContext_backwards() {
	cal, err := calendar.Parse([]byte(`{"zone": "America/New_York", "weekend": ["sat", "sun"],
		"holidays": [{"name": "Christmas Day", "date": "12-25", "observed": "nearest"}]}`))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	deadline := time.Date(2026, 12, 28, 11, 0, 0, 0, cal.Location()) // a Monday
	escalate, _ := cal.AddWorkingContext(ctx, deadline, -48*time.Hour)
	remind, _ := cal.AddWorkingDaysContext(ctx, deadline, -3)
	fmt.Println(escalate.Format(time.DateTime))
	fmt.Println(remind.Format(time.DateTime))
	// Output:
	// 2026-12-17 17:00:00
	// 2026-12-22 11:00:00
}

// Counting working days and working time in [a, b): negative backwards.
func ExampleCalendar_WorkingDaysBetween() {
	cal, err := calendar.Parse([]byte(`{"zone": "America/New_York", "weekend": ["sat", "sun"],
		"holidays": [{"name": "Christmas Day", "date": "12-25", "observed": "nearest"}]}`))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	a := time.Date(2026, 12, 1, 0, 0, 0, 0, cal.Location())
	b := time.Date(2027, 1, 1, 0, 0, 0, 0, cal.Location())
	days, _ := cal.WorkingDaysBetween(ctx, a, b)
	back, _ := cal.WorkingDaysBetween(ctx, b, a)
	work, _ := cal.WorkingTimeBetween(ctx, a, b)
	fmt.Println(days, back, work)
	// Output: 22 -22 198h0m0s
}
