// Package calendar provides business calendars for the scheduler: an IANA
// time zone, working hours per weekday and holiday rules, with queries
// ([Calendar.IsBusinessDay], [Calendar.IsWorkingTime], [Calendar.Holiday]),
// working-time arithmetic in both directions ([Calendar.AddWorkingContext],
// [Calendar.AddWorkingDaysContext], [Calendar.AddWorkingMonths],
// [Calendar.AddWorkingYears]: a negative count goes back, zero only rolls),
// counts ([Calendar.WorkingDaysBetween], [Calendar.WorkingTimeBetween]) and two
// recurrences built on [cronx.Schedule]: [Schedule], which applies a
// calendar to any recurrence, and [BusinessDay], the N-th business day of
// each month.
//
// # The JSON form
//
// A calendar is written as JSON and read by [Parse], which is strict:
// unknown fields, duplicate fields and malformed values are errors
// (*[Error], naming the JSON path of the offending value).
//
//	{
//	  "zone": "America/New_York",
//	  "hours": {"mon-fri": ["09:00-12:00", "13:00-17:30"], "sat": ["10:00-14:00"]},
//	  "holidays": [
//	    {"name": "New Year's Day", "date": "01-01", "observed": "nearest"},
//	    {"name": "Martin Luther King Jr. Day", "month": 1, "weekday": "mon", "nth": 3},
//	    {"name": "Memorial Day", "month": 5, "weekday": "mon", "nth": -1},
//	    {"name": "Winter break", "from": "12-24", "to": "01-01"},
//	    {"name": "Good Friday", "easter": -2},
//	    {"name": "Company days", "dates": ["2026-12-28", "2027-01-04"]}
//	  ]
//	}
//
// "zone" is a required IANA zone name. "hours" maps day names ("mon" ..
// "sun") or forward ranges ("mon-fri") to lists of "HH:MM-HH:MM" intervals
// (seconds allowed, end may be "24:00"); the days it does not list are not
// business days. "weekend" instead lists the days that are not business
// days (["sat", "sun"], ranges allowed) and stands for hours of
// 09:00-18:00 on every other day; a calendar gives one or neither. A
// calendar with neither is a calendar of holidays: every day that is not
// a holiday is a business day, weekends included, and working-time
// questions (business hours, [Calendar.AddWorkingContext] and the other
// arithmetic) use Monday to Friday, 09:00-18:00. Working hours are
// wall-clock times in the
// zone, also on DST days: "00:00-24:00" is 23 or 25 elapsed hours on the
// days the clocks change, and an interval boundary that falls in a DST gap
// is the instant the gap ends.
//
// Each holiday rule has a "name" and exactly one of: "date" ("MM-DD" every
// year; "02-29" only in leap years), "month"+"weekday"+"nth" (nth 1..5, or
// -1 for the last, -2 the second to last, ...), "from"+"to" (an inclusive
// "MM-DD" range that may wrap the year; it belongs to the year it starts
// in), "easter" (days from Western Easter Sunday), "julian_easter" (days
// from Orthodox Easter Sunday), "equinox" ("march" or "september": the
// equinox's date in the calendar's zone), "weekday" with one of "before",
// "after", "on_or_before" or "on_or_after" an anchor ("MM-DD", or an
// object with "date", "month"+"weekday"+"nth", "easter" or
// "julian_easter"; {"weekday": "wed", "before": "11-23"} is Buß- und
// Bettag), "between_holidays": true (a bridge day between two actual
// holidays) or "dates" (explicit "YYYY-MM-DD" dates).
//
// Rules naming one date a year may carry "observed": "nearest" (Saturday
// to the Friday before, Sunday to the Monday after), "monday" (Saturday or
// Sunday to the following Monday) or "sunday_to_monday"; both the actual
// and the observed date are holidays. Instead, "substitute":
// "next_free_weekday" keeps a holiday falling on a weekday of
// "substitute_on" (default: the weekdays without working hours) also on
// the first later weekday with hours that is neither a holiday nor an
// earlier substitute, so substitutes cascade (England's Christmas on a
// Sunday and Boxing Day on the Monday give Tuesday 27). A rule with
// "hours" makes half days, not holidays: business days with those hours.
// "years": [from, to] limits a rule to those years. docs/calendar.md has
// an example of each.
//
// A top-level "about" object may describe the calendar: "title",
// "sources", "checked" ([from, to] years) and "differences" (objects of
// "dates", "against" and "reason"). Parse checks its shape but it has no
// meaning: it is not in the canonical form nor in the fingerprint.
//
// [Calendar.MarshalJSON] writes the canonical form (hours when the calendar
// has its own, a weekend written as its hours, intervals merged and
// sorted, days grouped into ranges, dates sorted), and
// [Calendar.Fingerprint] hashes it, so two calendars that mean the same
// thing have the same fingerprint.
//
// A Calendar is immutable apart from an internal, mutex-guarded cache of
// holiday dates per year, and is safe for concurrent use.
//
// Stability: the calendar JSON form follows docs/calendar.md and changes
// only compatibly; a calendar's canonical form (and so a schedule's plan)
// changes only where docs/calendar.md says so. The Go API keeps its
// signatures within a major version; new rules and options may be added.
package calendar
