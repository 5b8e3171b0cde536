// Package testcal holds calendars that tests in several packages share.
package testcal

// MinuteAWeek is a calendar open one minute a week (Monday 09:00-09:01 in
// New York) with US holidays, Easter's among them: working-time counts
// over it span thousands of years (6000 whours is about 7,000), and the
// longest a timer form accepts (876000 whours) ends after year 9999.
const MinuteAWeek = `{"zone": "America/New_York", "hours": {"mon": ["09:00-09:01"]}, "holidays": [
	{"name": "New Year's Day", "date": "01-01", "observed": "nearest"},
	{"name": "Good Friday", "easter": -2},
	{"name": "Easter Monday", "easter": 1},
	{"name": "Memorial Day", "month": 5, "weekday": "mon", "nth": -1},
	{"name": "Christmas Day", "date": "12-25", "observed": "nearest"}]}`
