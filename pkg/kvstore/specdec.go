package kvstore

import "time"

// decodeSpecFast decodes, without reflection, a spec record in the form
// Spec.Encode writes for most specs: no input, inline calendar or trace,
// no escape in a string, no whitespace, each key once, in lower case.
// What a scheduler reads for every schedule at a start, and with
// encoding/json a third of a cold start's CPU. Anything else is left to
// DecodeSpec's encoding/json path (ok false): decodeSpecFast only ever
// accepts what that path reads, without error, to the same value
// (FuzzSpecDecodeFast checks it).
func decodeSpecFast(data []byte) (s Spec, ok bool) {
	d := fastDecoder{b: data}
	ok = d.object(func(key []byte) (uint32, bool) {
		switch string(key) { // no allocation
		case "id":
			return 1 << 0, d.str(&s.ID)
		case "workflow":
			return 1 << 1, d.str(&s.Workflow)
		case "cron":
			return 1 << 2, d.str(&s.Cron)
		case "dialect":
			return 1 << 3, d.str(&s.Dialect)
		case "dom_dow":
			return 1 << 4, d.str(&s.DomDow)
		case "dst_gap":
			return 1 << 5, d.str(&s.DSTGap)
		case "dst_overlap":
			return 1 << 6, d.str(&s.DSTOverlap)
		case "every":
			return 1 << 7, d.str(&s.Every)
		case "align":
			return 1 << 8, d.str(&s.Align)
		case "anchor":
			return 1 << 9, d.timePtr(&s.Anchor)
		case "phase":
			return 1 << 10, d.str(&s.Phase)
		case "at":
			return 1 << 11, d.timePtr(&s.At)
		case "start":
			return 1 << 12, d.timePtr(&s.Start)
		case "end":
			return 1 << 13, d.timePtr(&s.End)
		case "limit":
			return 1 << 14, d.int(&s.Limit)
		case "tz":
			return 1 << 15, d.str(&s.TZ)
		case "calendar":
			return 1 << 16, d.str(&s.Calendar)
		case "holiday_roll":
			return 1 << 17, d.str(&s.HolidayRoll)
		case "business_hours_only":
			return 1 << 18, d.bool(&s.BusinessHoursOnly)
		case "business_day":
			return 1 << 19, d.int(&s.BusinessDay)
		case "time":
			return 1 << 20, d.str(&s.Time)
		case "misfire":
			return 1 << 21, d.str((*string)(&s.Misfire))
		case "catchup_window":
			return 1 << 22, d.str(&s.CatchupWindow)
		case "misfire_threshold":
			return 1 << 23, d.str(&s.MisfireThreshold)
		case "overlap":
			return 1 << 24, d.str((*string)(&s.Overlap))
		case "completion_timeout":
			return 1 << 25, d.str(&s.CompletionTimeout)
		case "description":
			return 1 << 26, d.str(&s.Description)
		case "static":
			return 1 << 27, d.str(&s.Static)
		case "labels":
			return 1 << 28, d.labels(&s.Labels)
		case "jitter":
			return 1 << 29, d.str(&s.Jitter)
		}
		return 0, false // input, calendar_inline, trace, unknown: encoding/json's
	})
	if !ok || d.i != len(d.b) {
		return Spec{}, false
	}
	return s, true
}

// timePtr reads a time (see time) into a new *time.Time.
func (d *fastDecoder) timePtr(dst **time.Time) bool {
	t := new(time.Time)
	if !d.time(t) {
		return false
	}
	*dst = t
	return true
}

// labels reads an object of strings (a spec's labels) into a new map; a
// key given twice is encoding/json's to report.
func (d *fastDecoder) labels(dst *map[string]string) bool {
	if !d.open() {
		return false
	}
	m := map[string]string{}
	if d.closing() {
		*dst = m
		return true
	}
	for {
		k, ok := d.raw()
		if !ok || d.i >= len(d.b) || d.b[d.i] != ':' {
			return false
		}
		d.i++
		v, ok := d.raw()
		if !ok {
			return false
		}
		if _, dup := m[string(k)]; dup {
			return false
		}
		m[string(k)] = string(v)
		more, ok := d.next()
		if !ok {
			return false
		}
		if !more {
			*dst = m
			return true
		}
	}
}
