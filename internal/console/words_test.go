package console

import (
	"testing"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestInWords(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		spec kvstore.Spec
		want string
	}{
		{kvstore.Spec{Every: "5s"}, "every 5 seconds"},
		{kvstore.Spec{Every: "1h"}, "every hour"},
		{kvstore.Spec{Every: "90m"}, "every 1 hour 30 minutes"},
		{kvstore.Spec{Every: "1d"}, "every day"}, {kvstore.Spec{Every: "1 day 3 hours"}, "every 1 day 3 hours"},
		{kvstore.Spec{At: &at}, "once"},
		{kvstore.Spec{BusinessDay: 1, Time: "09:00"}, "the 1st business day of each month at 09:00"},
		{kvstore.Spec{BusinessDay: -1}, "the last business day of each month at 00:00"},
		{kvstore.Spec{BusinessDay: -2, Time: "17:30"}, "the 2nd-to-last business day of each month at 17:30"},
		{kvstore.Spec{Cron: "* * * * *"}, "every minute"},
		{kvstore.Spec{Cron: "*/15 * * * *"}, "every 15 minutes"},
		{kvstore.Spec{Cron: "30 * * * *"}, "every hour at minute 30"},
		{kvstore.Spec{Cron: "0 */6 * * *"}, "every 6 hours at minute 0"},
		{kvstore.Spec{Cron: "0 2 * * *"}, "every day at 02:00"},
		{kvstore.Spec{Cron: "CRON_TZ=Europe/Paris 0 2 * * *"}, "every day at 02:00"},
		{kvstore.Spec{Cron: "0 9 * * 1-5"}, "at 09:00 on weekdays"},
		{kvstore.Spec{Cron: "0 9 * * MON,WED,FRI"}, "at 09:00 on Monday, Wednesday and Friday"},
		{kvstore.Spec{Cron: "0 9 * * sat-sun"}, "at 09:00 on Saturday to Sunday"},
		{kvstore.Spec{Cron: "0 9,17 * * *"}, "every day at 09:00 and 17:00"},
		{kvstore.Spec{Cron: "0 9-17 * * *"}, "every hour from 09:00 to 17:00"},
		{kvstore.Spec{Cron: "0 0 1 * *"}, "at 00:00 on the 1st of the month"},
		{kvstore.Spec{Cron: "0 0 1,15 * *"}, "at 00:00 on the 1st and 15th of the month"},
		{kvstore.Spec{Cron: "0 0 L * *"}, "at 00:00 on the last day of the month"},
		{kvstore.Spec{Cron: "0 0 13 * 5", DomDow: "and"}, "at 00:00 on the 13th of the month if it is Friday"},
		{kvstore.Spec{Cron: "0 0 13 * 5"}, "at 00:00 on the 13th of the month or on Friday"},
		{kvstore.Spec{Cron: "0 12 25 12 *"}, "at 12:00 on the 25th of the month in December"},
		{kvstore.Spec{Cron: "30 0 9 * * *"}, "every day at 09:00:30"},
		{kvstore.Spec{Cron: "*/10 * * * * *"}, "every 10 seconds"},
		{kvstore.Spec{Cron: "0 0 12 * * ? 2027"}, "every day at 12:00"},
		{kvstore.Spec{Cron: "@daily"}, "every day at 00:00"},
		{kvstore.Spec{Cron: "@every 90s"}, "every 1 minute 30 seconds"},
		// Forms the words do not cover: the expression alone is shown.
		{kvstore.Spec{Cron: "0 0 * * 5#3"}, ""},
		{kvstore.Spec{Cron: "H 2 * * *"}, ""},
		{kvstore.Spec{Cron: "0 0 LW * *"}, ""},
		{kvstore.Spec{Cron: "0 12 ? * 6#3", Dialect: "quartz"}, ""},
		{kvstore.Spec{Cron: "1 2 3"}, ""},
	} {
		if got := inWords(c.spec); got != c.want {
			t.Errorf("%+v: %q, want %q", c.spec, got, c.want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 31: "31st", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}
