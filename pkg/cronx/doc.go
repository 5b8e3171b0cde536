// Package cronx turns recurrence specifications into fire times.
//
// Every recurrence is a [Schedule]: Next(after) returns the first fire time
// strictly after after, or the zero time when there is none. Three kinds
// exist:
//
//   - [Cron], a cron expression evaluated in a time zone ([ParseCron]);
//   - [Interval], a fixed period in phase with an anchor instant
//     ([ParseEvery] validates the period);
//   - [Once], a single instant.
//
// Invalid input is reported as a [*ParseError] naming the faulty part.
// [LoadZone] resolves time zone names with the same error type.
//
// # Cron syntax
//
// An expression has 5 fields,
//
//	minute hour day-of-month month day-of-week
//
// firing at second 0, or 6 fields with the seconds first, as in Quartz and
// the NATS server (not last, as some other libraries read a 6th field):
//
//	second minute hour day-of-month month day-of-week
//
// Fields are separated by spaces. Each is "*" or a comma-separated list of
// items "N", "N-M", "*/S", "N/S" or "N-M/S", where "/S" takes every S-th
// value of the range and "N/S" ranges from N to the field's last value.
// Allowed values:
//
//	second        0-59
//	minute        0-59
//	hour          0-23
//	day-of-month  1-31, or "?" for "*"
//	month         1-12 or JAN-DEC
//	day-of-week   0-7 or SUN-SAT (0 and 7 are Sunday), or "?" for "*"
//
// Names are case-insensitive. Ranges must not be reversed ("30-20" is an
// error), except that SUN ends a day-of-week range as 7, so "FRI-SUN" is
// Friday to Sunday. In day-of-week "*" and "N/S" stop at 6 (Saturday).
// A step is between 1 and the field's largest value.
//
// If both day-of-month and day-of-week are restricted, that is written as
// anything but a bare "*" or "?", a day matches when either field matches
// (the classic cron rule): "0 0 1 * MON" fires on the 1st and on Mondays.
//
// The aliases (case-insensitive) stand for:
//
//	@yearly, @annually  0 0 1 1 *
//	@monthly            0 0 1 * *
//	@weekly             0 0 * * 0
//	@daily, @midnight   0 0 * * *
//	@hourly             0 * * * *
//
// Quartz extensions L, W, # and Jenkins-style H are recognised and
// rejected as not supported yet. An expression that can never fire, such as
// "0 0 30 2 *", is rejected when parsed.
//
// Fire times are computed by github.com/hashicorp/cronexpr, which covers
// the years 1970 through 2099: Cron.Next never returns a time before 1970
// and returns the zero time once no fire time remains before 2100.
//
// # Time zones and daylight saving time
//
// A Cron's fire times are the instants whose wall-clock reading in the
// Cron's location matches the expression. This policy is not configurable
// yet. Its consequences at daylight-saving transitions:
//
//   - when clocks jump forward, wall-clock times inside the gap do not
//     exist and are skipped: in America/New_York "30 2 * * *" does not fire
//     on the day summer time starts;
//   - when clocks fall back, wall-clock times inside the overlap happen
//     twice and fire twice, once per UTC offset: "30 1 * * *" fires at 01:30
//     EDT and again at 01:30 EST.
//
// In zones whose clocks move by a whole hour away from midnight, such as
// America/New_York and Europe/London, this is also what cronexpr computes
// when handed a time in the zone. cronx does not use cronexpr that way:
// cronexpr's daylight-saving code loops forever in zones that change at
// midnight (America/Havana) and skips times that do exist in zones that
// move by 30 minutes (Australia/Lord_Howe). Instead cronx runs cronexpr on
// wall-clock readings expressed in UTC, one period of constant UTC offset at
// a time, and converts the result back to an instant itself. The result of
// Next is always strictly after its argument and is computed in a bounded
// number of steps.
//
// Interval and Once are instants, not wall-clock readings; they are
// unaffected by time zones and return UTC times.
package cronx
