package calendar

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
)

// MarshalJSON writes the calendar's canonical JSON form, which [Parse]
// accepts and which parses to an equal calendar: "hours" when the calendar
// has its own (a "weekend" is written as the hours it stands for), with
// each day's intervals sorted and touching ones merged, and runs of
// consecutive days with the same hours written as ranges ("mon-fri");
// holiday rules in the calendar's order (it decides which name a date
// shared by two rules gets), with their dates sorted and empty options
// left out.
func (c *Calendar) MarshalJSON() ([]byte, error) {
	doc := canonicalDoc{Zone: c.zone}
	if c.ownHours {
		doc.Hours = &c.hours
	}
	for i := range c.rules {
		doc.Holidays = append(doc.Holidays, c.rules[i].canonical())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Fingerprint is the hex SHA-256 of the canonical JSON form: it changes if
// and only if the calendar's meaning changes.
func (c *Calendar) Fingerprint() string {
	c.fpOnce.Do(func() {
		b, err := c.MarshalJSON()
		if err != nil { // not reached: the canonical form always encodes
			return
		}
		sum := sha256.Sum256(b)
		c.fp = hex.EncodeToString(sum[:])
	})
	return c.fp
}

// canonicalDoc is the canonical JSON form, fields in output order.
type canonicalDoc struct {
	Zone     string          `json:"zone"`
	Hours    *week           `json:"hours,omitempty"`
	Holidays []canonicalRule `json:"holidays,omitempty"`
}

// canonicalRule is a holiday rule's canonical JSON form.
// The members added with the later rule kinds come only with them, so
// the calendars written before keep their canonical form and fingerprint.
type canonicalRule struct {
	Name            string   `json:"name"`
	Date            string   `json:"date,omitempty"`
	Month           int      `json:"month,omitempty"`
	Weekday         string   `json:"weekday,omitempty"`
	Nth             int      `json:"nth,omitempty"`
	Before          any      `json:"before,omitempty"`
	After           any      `json:"after,omitempty"`
	OnOrBefore      any      `json:"on_or_before,omitempty"`
	OnOrAfter       any      `json:"on_or_after,omitempty"`
	From            string   `json:"from,omitempty"`
	To              string   `json:"to,omitempty"`
	Easter          *int     `json:"easter,omitempty"`
	JulianEaster    *int     `json:"julian_easter,omitempty"`
	Equinox         string   `json:"equinox,omitempty"`
	BetweenHolidays bool     `json:"between_holidays,omitempty"`
	Dates           []string `json:"dates,omitempty"`
	Observed        string   `json:"observed,omitempty"`
	Substitute      string   `json:"substitute,omitempty"`
	SubstituteOn    []string `json:"substitute_on,omitempty"`
	Hours           []string `json:"hours,omitempty"`
	Years           []int    `json:"years,omitempty"`
}

// canonicalAnchor is a weekday-relative rule's anchor, when not a plain
// "MM-DD".
type canonicalAnchor struct {
	Month        int    `json:"month,omitempty"`
	Weekday      string `json:"weekday,omitempty"`
	Nth          int    `json:"nth,omitempty"`
	Easter       *int   `json:"easter,omitempty"`
	JulianEaster *int   `json:"julian_easter,omitempty"`
}

// canonical builds the rule's canonical form.
func (r *rule) canonical() canonicalRule {
	out := canonicalRule{Name: r.name, Observed: observedNames[r.observed]}
	switch r.kind {
	case kindDate:
		out.Date = monthDay(r.month, r.day)
	case kindNth:
		out.Month, out.Nth = int(r.month), r.nth
		out.Weekday = dayNames[(int(r.weekday)+6)%7]
	case kindRange:
		out.From, out.To = monthDay(r.month, r.day), monthDay(r.toMonth, r.toDay)
	case kindEaster:
		e := r.easter
		out.Easter = &e
	case kindDates:
		for _, d := range r.dates {
			out.Dates = append(out.Dates, d.String())
		}
	case kindJulianEaster:
		e := r.easter
		out.JulianEaster = &e
	case kindEquinox:
		out.Equinox = strings.ToLower(r.month.String())
	case kindRelative:
		out.Weekday = dayNames[(int(r.weekday)+6)%7]
		a := r.anchor.canonicalAnchor()
		switch r.rel {
		case relBefore:
			out.Before = a
		case relAfter:
			out.After = a
		case relOnOrBefore:
			out.OnOrBefore = a
		default:
			out.OnOrAfter = a
		}
	case kindBridge:
		out.BetweenHolidays = true
	}
	if r.subst {
		out.Substitute = substituteNextFree
		out.SubstituteOn = weekdayNames(r.substOn)
	}
	for _, h := range r.half {
		out.Hours = append(out.Hours, h.String())
	}
	if r.hasYears {
		out.Years = []int{r.fromYear, r.toYear}
	}
	return out
}

// MarshalJSON writes the hours Monday first, grouping runs of days with
// the same intervals into ranges and leaving out days without hours.
func (w week) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i := 0; i < 7; {
		spans := w[weekdayOf(i)]
		j := i + 1
		for j < 7 && slices.Equal(w[weekdayOf(j)], spans) {
			j++
		}
		if len(spans) > 0 {
			if buf.Len() > 1 {
				buf.WriteByte(',')
			}
			key := dayNames[i]
			if j-1 > i {
				key += "-" + dayNames[j-1]
			}
			texts := make([]string, len(spans))
			for k, s := range spans {
				texts[k] = s.String()
			}
			buf.WriteString(`"` + key + `":["` + strings.Join(texts, `","`) + `"]`)
		}
		i = j
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// canonicalAnchor is an anchor's canonical form: "MM-DD" for a date, else
// an object.
func (r *rule) canonicalAnchor() any {
	switch r.kind {
	case kindDate:
		return monthDay(r.month, r.day)
	case kindNth:
		return canonicalAnchor{Month: int(r.month), Weekday: dayNames[(int(r.weekday)+6)%7], Nth: r.nth}
	case kindJulianEaster:
		e := r.easter
		return canonicalAnchor{JulianEaster: &e}
	}
	e := r.easter
	return canonicalAnchor{Easter: &e}
}
