package kvstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/jsonenc"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// DefaultKey is a schedule's id by content, for a spec registered without
// one (the CLI's schedule add without --id, the admin API's put without
// id, client.Schedule without WithKey): "<workflow>-<12 hex digits>", the
// digits the start of the SHA-256 of the spec's canonical form
//
//	workflow NUL recurrence NUL input
//
// where input is the canonical JSON of the input (object keys sorted,
// numbers as written, no spaces; nothing without an input) and recurrence
// is, for the kind of schedule,
//
//	cron <expression>
//	every <interval as Go prints it: 1h0m0s for 1h, 60m or 3600s>
//	at <time in UTC, RFC 3339 with nanoseconds>
//	business_day <n> <time>
//
// followed by " name=value" for each of these fields that is set, in this
// order: tz, dialect, dom_dow, dst_gap, dst_overlap, align (not "anchor"
// without an anchor, which is what no align means), anchor (UTC), phase,
// start, end, limit, calendar, calendar_inline (canonical JSON),
// holiday_roll, business_hours_only, misfire, catchup_window,
// misfire_threshold, overlap, completion_timeout. So a spec whose zone or
// policies differ is another schedule, and a spec with none of them has
// the key it had before they were part of the form. The description,
// labels and static are not part of the content: changing the description
// or the labels of a schedule updates it in place (the store sees the
// change and writes it; the plan, compile.Plan, does not, so the schedule
// keeps its cadence).
func DefaultKey(s Spec) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", s.Workflow, s.identityRecurrence())
	if in, err := jsonenc.Canonical(s.Input); err == nil {
		h.Write(in)
	} else {
		h.Write(s.Input) // invalid JSON: refused by the spec check anyway
	}
	return s.Workflow + "-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// identityRecurrence is the recurrence part of DefaultKey's canonical form.
func (s Spec) identityRecurrence() string {
	var b strings.Builder
	switch {
	case s.Cron != "":
		b.WriteString("cron " + s.Cron)
	case s.Every != "":
		every := s.Every
		if d, err := cronx.ParseEvery(s.Every); err == nil {
			every = d.String()
		}
		b.WriteString("every " + every)
	case s.At != nil:
		b.WriteString("at " + s.At.UTC().Format(time.RFC3339Nano))
	case s.BusinessDay != 0:
		fmt.Fprintf(&b, "business_day %d %s", s.BusinessDay, s.Time)
	}
	cal := ""
	if len(s.CalendarInline) > 0 {
		c, err := jsonenc.Canonical(s.CalendarInline)
		if err != nil {
			c = s.CalendarInline
		}
		cal = string(c)
	}
	align := s.Align
	if align == AlignAnchor && s.Anchor == nil {
		align = "" // from the registration: what a spec without align means
	}
	limit, bho := "", ""
	if s.Limit != 0 {
		limit = fmt.Sprint(s.Limit)
	}
	if s.BusinessHoursOnly {
		bho = "true"
	}
	for _, f := range []struct{ name, value string }{
		{"tz", s.TZ}, {"dialect", s.Dialect}, {"dom_dow", s.DomDow}, {"dst_gap", s.DSTGap}, {"dst_overlap", s.DSTOverlap},
		{"align", align}, {"anchor", utcText(s.Anchor)}, {"phase", s.Phase}, {"start", utcText(s.Start)}, {"end", utcText(s.End)}, {"limit", limit},
		{"calendar", s.Calendar}, {"calendar_inline", cal}, {"holiday_roll", s.HolidayRoll}, {"business_hours_only", bho},
		{"misfire", string(s.Misfire)}, {"catchup_window", s.CatchupWindow}, {"misfire_threshold", s.MisfireThreshold},
		{"overlap", string(s.Overlap)}, {"completion_timeout", s.CompletionTimeout},
	} {
		if f.value != "" {
			b.WriteString(" " + f.name + "=" + f.value)
		}
	}
	return b.String()
}

func utcText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
