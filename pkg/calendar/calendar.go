package calendar

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// Calendar is a business calendar: a zone, working hours per weekday and
// holiday rules. Build one with [Parse]; the zero Calendar is not usable.
// A Calendar is safe for concurrent use.
type Calendar struct {
	zone  string
	loc   *time.Location
	hours week
	// ownHours: the calendar gives "hours" (or a "weekend"), so its days
	// without hours are not business days. Without it every day but a
	// holiday is a business day, and hours (the default Monday to Friday,
	// 09:00-18:00) serve working-time questions only.
	ownHours bool
	rules    []rule

	// derives: a rule has a "substitute" or is a bridge day, so a year's
	// holidays depend on the others' (see derive); halves: a rule gives
	// half days.
	derives, halves bool

	mu    sync.RWMutex
	years map[int]*yearInfo // holidays and half days per calendar year

	// fp is the Fingerprint, computed once: a calendar does not change
	// after Parse, and every schedule naming it asks when it compiles.
	fpOnce sync.Once
	fp     string
}

// MaxJSONBytes caps a calendar's JSON form, and MaxNameBytes a holiday
// rule's name (which can travel in a fire's Sched-Note header): both keep
// records and headers well under NATS's limits.
const (
	MaxJSONBytes = 256 << 10
	MaxNameBytes = 1 << 10
)

// Parse reads a calendar from its JSON form (see the package
// documentation). Errors are *[Error] naming the JSON path of the
// offending value; unknown and duplicate fields are errors, and so is a
// form longer than MaxJSONBytes.
func Parse(data []byte) (*Calendar, error) { return ParseZones(data, nil) }

// ParseZones is Parse with the calendar's zone resolved through zones,
// which shares one *time.Location per name between calendars (nil loads
// it anew).
func ParseZones(data []byte, zones *cronx.Zones) (*Calendar, error) {
	if len(data) > MaxJSONBytes {
		return nil, &Error{Reason: fmt.Sprintf("%d bytes is over the maximum of %d", len(data), MaxJSONBytes)}
	}
	var top json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, &Error{Reason: err.Error(), Err: err}
	}
	members, err := objectMembers(top, "")
	if err != nil {
		return nil, err
	}
	c := &Calendar{hours: defaultWeek()}
	hasZone := false
	var hours, weekend bool
	for _, m := range members {
		switch m.key {
		case "zone":
			hasZone = true
			if err := c.setZone(m.val, zones); err != nil {
				return nil, err
			}
		case "hours":
			hours = true
			if c.hours, err = parseHours(m.val, "hours"); err != nil {
				return nil, err
			}
		case "weekend":
			weekend = true
			if c.hours, err = parseWeekend(m.val, "weekend"); err != nil {
				return nil, err
			}
		case "holidays":
			if c.rules, err = parseRules(m.val, "holidays"); err != nil {
				return nil, err
			}
		case "about":
			if err := checkAbout(m.val, "about"); err != nil {
				return nil, err
			}
		default:
			return nil, fieldError(m.key, "", "unknown field")
		}
	}
	if !hasZone {
		return nil, fieldError("zone", "", "required")
	}
	if hours && weekend {
		return nil, fieldError("weekend", "", "give hours or weekend, not both: with hours, the days without hours are the weekend")
	}
	c.ownHours = hours || weekend
	c.noteRules()
	return c, nil
}

// setZone reads and loads "zone".
func (c *Calendar) setZone(raw json.RawMessage, zones *cronx.Zones) error {
	name, err := decodeString(raw, "zone")
	if err != nil {
		return err
	}
	if name == "" {
		return fieldError("zone", "", "required")
	}
	loc, err := zones.Load(name)
	if err != nil {
		reason := "unknown time zone"
		if pe := (*cronx.ParseError)(nil); errors.As(err, &pe) {
			reason = pe.Reason
		}
		return &Error{Field: "zone", Value: name, Reason: reason, Err: err}
	}
	c.zone, c.loc = name, loc
	return nil
}

// parseRules reads the "holidays" list.
func parseRules(raw json.RawMessage, path string) ([]rule, error) {
	elems, err := arrayElems(raw, path)
	if err != nil {
		return nil, err
	}
	rules := make([]rule, 0, len(elems))
	for i, e := range elems {
		r, err := parseRule(e, indexPath(path, i))
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// Location returns the calendar's time zone.
func (c *Calendar) Location() *time.Location { return c.loc }
