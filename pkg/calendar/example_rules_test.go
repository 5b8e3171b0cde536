package calendar_test

import (
	"context"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// England's Christmas Day fell on a Sunday in 2022 and Boxing Day on the
// Monday: the substitute for Christmas cascades past Boxing Day to
// Tuesday 27 December.
func ExampleParse_substitute() {
	c, err := calendar.Parse([]byte(`{"zone": "Europe/London", "weekend": ["sat", "sun"], "holidays": [
		{"name": "Christmas Day", "date": "12-25", "substitute": "next_free_weekday"},
		{"name": "Boxing Day", "date": "12-26", "substitute": "next_free_weekday"}
	]}`))
	if err != nil {
		panic(err)
	}
	for day := 25; day <= 28; day++ {
		t := time.Date(2022, 12, day, 12, 0, 0, 0, c.Location())
		fmt.Printf("%s %s\n", t.Format("Mon 02"), c.NonWorkingReason(t))
	}
	// Output:
	// Sun 25 holiday "Christmas Day" (fixed 12-25, substitute next_free_weekday)
	// Mon 26 holiday "Boxing Day" (fixed 12-26, substitute next_free_weekday)
	// Tue 27 holiday "Christmas Day" (fixed 12-25, substitute next_free_weekday), substitute for Sunday 2022-12-25
	// Wed 28
}

// An early close on Christmas Eve: the day is a business day, and working
// time counts only its hours.
func ExampleCalendar_HalfDay() {
	c, err := calendar.Parse([]byte(`{"zone": "America/New_York", "hours": {"mon-fri": ["09:30-16:00"]}, "holidays": [
		{"name": "Christmas Eve", "date": "12-24", "hours": ["09:30-13:00"]},
		{"name": "Christmas Day", "date": "12-25"}
	]}`))
	if err != nil {
		panic(err)
	}
	eve := time.Date(2026, 12, 24, 12, 0, 0, 0, c.Location())
	h, _ := c.HalfDay(eve)
	fmt.Println(h.Name+":", h.Rule, c.IsBusinessDay(eve))
	due, err := c.AddWorkingContext(context.Background(), eve, 2*time.Hour)
	if err != nil {
		panic(err)
	}
	fmt.Println(due.Format("Mon 2006-01-02 15:04"))
	// Output:
	// Christmas Eve: fixed 12-24, half day 09:30-13:00 true
	// Mon 2026-12-28 10:30
}
