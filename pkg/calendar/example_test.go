package calendar_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// "48 working hours from Friday 17:00 fires on Tuesday" holds for a
// calendar that works around the clock on weekdays; with 09:00-18:00 it
// is the following Monday.
func ExampleCalendar_AddWorkingContext() {
	for _, js := range []string{
		`{"zone": "America/New_York", "hours": {"mon-fri": ["00:00-24:00"]}}`,
		`{"zone": "America/New_York"}`, // Monday to Friday, 09:00-18:00
	} {
		c, err := calendar.Parse([]byte(js))
		if err != nil {
			panic(err)
		}
		friday := time.Date(2026, 1, 9, 17, 0, 0, 0, c.Location())
		due, err := c.AddWorkingContext(context.Background(), friday, 48*time.Hour)
		if err != nil {
			panic(err)
		}
		fmt.Println(due.Format("Mon 2006-01-02 15:04"))
	}
	// Output:
	// Tue 2026-01-13 17:00
	// Mon 2026-01-19 11:00
}

func ExampleParse() {
	c, err := calendar.Parse([]byte(`{
		"zone": "America/New_York",
		"hours": {"mon-fri": ["09:00-12:00", "13:00-17:30"]},
		"holidays": [{"name": "Christmas Day", "date": "12-25", "observed": "nearest"}]
	}`))
	if err != nil {
		panic(err)
	}
	for _, day := range []int{24, 25, 26} {
		fmt.Printf("%d: %q\n", day, c.NonWorkingReason(time.Date(2027, 12, day, 12, 0, 0, 0, c.Location())))
	}
	_, err = calendar.Parse([]byte(`{"zone": "UTC", "holidays": [{"name": "X", "month": 1, "weekday": "mnday", "nth": 3}]}`))
	fmt.Println(err)
	// Output:
	// 24: "holiday \"Christmas Day\" (fixed 12-25, observed nearest), observed for Saturday 2027-12-25"
	// 25: "holiday \"Christmas Day\" (fixed 12-25, observed nearest)"
	// 26: "no working hours on Sunday"
	// calendar: holidays[0].weekday "mnday": unknown day
}

// A 02:00 cron limited to business hours fires at 09:00; the weekend's
// occurrences, rolled to Monday, fire once at Monday 09:00; a holiday
// rolls to the next business day.
func ExampleSchedule() {
	c, err := calendar.Parse([]byte(`{"zone": "America/New_York", "weekend": ["sat", "sun"],
		"holidays": [{"name": "Martin Luther King Jr. Day", "month": 1, "weekday": "mon", "nth": 3}]}`))
	if err != nil {
		panic(err)
	}
	daily, err := cronx.NewCron("0 2 * * *", cronx.Options{Location: c.Location()})
	if err != nil {
		panic(err)
	}
	s := calendar.Schedule{Base: daily, Calendar: c, Roll: calendar.RollNext, BusinessHoursOnly: true}
	after := time.Date(2026, 1, 15, 12, 0, 0, 0, c.Location()) // Thursday
	for range 4 {
		step := s.Explain(after)
		fmt.Println(step.At.Format("Mon 01-02 15:04"), "from", step.Nominal.Format("Mon 01-02 15:04"))
		fmt.Println("  ", step.Moved)
		after = step.At
	}
	// Output:
	// Fri 01-16 09:00 from Fri 01-16 02:00
	//    outside working hours: moved to the next working start
	// Tue 01-20 09:00 from Sat 01-17 02:00
	//    rolled to the next business day: no working hours on Saturday; outside working hours: moved to the next working start
	// Wed 01-21 09:00 from Wed 01-21 02:00
	//    outside working hours: moved to the next working start
	// Thu 01-22 09:00 from Thu 01-22 02:00
	//    outside working hours: moved to the next working start
}

func ExampleBusinessDay() {
	c, err := calendar.Parse([]byte(`{"zone": "Europe/London", "weekend": ["sat", "sun"],
		"holidays": [{"name": "New Year's Day", "date": "01-01", "observed": "monday"}]}`))
	if err != nil {
		panic(err)
	}
	second := calendar.BusinessDay{Calendar: c, N: 2, Hour: 10}
	last := calendar.BusinessDay{Calendar: c, N: -1, Hour: 16}
	after := time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC)
	fmt.Println(second.Next(after).Format("Mon 2006-01-02 15:04 MST"))
	fmt.Println(last.Next(after).Format("Mon 2006-01-02 15:04 MST"))
	// Output:
	// Tue 2027-01-05 10:00 GMT
	// Thu 2026-12-31 16:00 GMT
}

// A calendar of holidays only (the tramai seed's skip calendar) skips its
// holidays and nothing else: a daily schedule fires on the weekend.
// Business hours, when asked for, are Monday to Friday, 09:00-18:00.
func ExampleSchedule_holidaysOnly() {
	c, err := calendar.Parse([]byte(`{"zone": "Europe/Paris",
		"holidays": [{"name": "Labour Day", "date": "05-01"}]}`))
	if err != nil {
		panic(err)
	}
	daily, err := cronx.NewCron("0 7 * * *", cronx.Options{Location: c.Location()})
	if err != nil {
		panic(err)
	}
	after := time.Date(2026, 4, 29, 12, 0, 0, 0, c.Location()) // Wednesday
	for _, bho := range []bool{false, true} {
		s := calendar.Schedule{Base: daily, Calendar: c, BusinessHoursOnly: bho}
		var fires []string
		for t := after; len(fires) < 4; {
			t = s.Next(t)
			fires = append(fires, t.Format("Mon 02 15:04"))
		}
		fmt.Println(strings.Join(fires, "  "))
	}
	// Output:
	// Thu 30 07:00  Sat 02 07:00  Sun 03 07:00  Mon 04 07:00
	// Thu 30 09:00  Mon 04 09:00  Tue 05 09:00  Wed 06 09:00
}
