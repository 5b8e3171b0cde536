// Package cronx turns recurrence specs into fire times.
//
// Every recurrence satisfies [Schedule]: Next(after) returns the first fire
// time strictly after after, or the zero time when there is none. The
// scheduler computes each next slot from the previous scheduled time, so
// nothing drifts.
//
//   - [Cron]: cron expressions in 5, 6 (seconds first) or 7 (with year)
//     fields, names (abbreviated or in full), ranges (wrapping around when
//     written backwards, "22-2"), steps, lists, '*' in a list, ?, L, L-n,
//     LW, L-nW, nW, Wn, ranges ending in L, nL, n#k, H, the @aliases of
//     cron and gronx, a CRON_TZ= prefix, a standard or Quartz dialect, a
//     day-of-month/day-of-week rule ([DomDow]), in any IANA zone with a
//     per-schedule DST policy ([GapPolicy], [OverlapPolicy]). Built by
//     [Parse] or [NewCron].
//   - [Interval]: a continuous period from an anchor ("every 90m"), which,
//     unlike a cron step, does not restart at hour, day or month
//     boundaries. [ParseEvery] reads "500ms", "1d12h", "2 hours",
//     "3600000" (milliseconds): the one duration grammar of
//     [ParseDuration], which [FormatDuration] writes canonically.
//   - [DayInterval]: every N days at the same wall-clock time in a zone,
//     across DST changes ([DaysFrom], [DaysFromEpoch]).
//   - [Once] / [At]: a one-shot.
//   - [Bounded]: start and end bounds and a run count around any of them.
//
// # Where cronx differs from hashicorp/cronexpr
//
// cronx began on hashicorp/cronexpr and now has its own matcher, kept
// honest by differential tests against cronexpr and robfig/cron. It
// differs on purpose where cronexpr is wrong or limited:
//
//   - a 6-field expression has the seconds first (cronexpr reads it as
//     year-last);
//   - malformed input is an error naming the field (cronexpr accepts some
//     with undefined behaviour, and panics on others);
//   - a day-of-week range ending in 7 or SUN includes Sunday (cronexpr
//     drops it);
//   - L-n, nL and H exist; years run to 2199 (cronexpr: 2099);
//   - times are computed in wall-clock terms one constant-offset period at
//     a time, so zones that change at midnight (Havana, Asuncion, Santiago)
//     work; cronexpr's own DST code can loop forever there;
//   - the DST behaviour is a per-schedule choice (natural, skip, shift;
//     natural, once, twice) instead of an accident;
//   - Next allocates nothing.
//
// Day-of-month and day-of-week follow Linux cron by default
// ([DomDowCronie]): when both are restricted a day matching either fires
// ("0 0 13 * 5" is every 13th and every Friday); when either starts with
// '*' a day must match both. [DomDowPOSIX] (robfig/cron, croniter) and
// [DomDowAnd] are the alternatives.
//
// Forms whose meaning peers dispute are refused rather than guessed: '#'
// in a day-of-week list ("5,6#3") and a lone L in a day-of-week list.
//
// docs/cron.md in the repository has the dialect and DST policy tables.
//
// Stability: the expressions it accepts and the instants they name follow
// docs/cron.md and change only compatibly (new dialect options, new
// forms). The Go API keeps its signatures within a major version; new
// options may be added.
package cronx
