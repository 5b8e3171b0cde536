package calendar_test

import (
	"errors"
	"testing"

	"github.com/jetsched/jetsched/pkg/calendar"
)

// TestAboutIgnoredBySemantics: "about" is checked but does not change the
// calendar: the canonical form and the fingerprint are those without it.
func TestAboutIgnoredBySemantics(t *testing.T) {
	without := mustParse(t, usCalendar)
	with := mustParse(t, `{"about": {"title": "US", "sources": ["5 U.S.C. 6103"], "checked": [2000, 2040],
	  "differences": [{"dates": ["2001-11-12", "2001-11-12"], "against": "date-holidays", "reason": "observed"}]},`+usCalendar[1:])
	if with.Fingerprint() != without.Fingerprint() {
		t.Errorf("fingerprint with about %s, without %s", with.Fingerprint(), without.Fingerprint())
	}
	a, _ := with.MarshalJSON()
	b, _ := without.MarshalJSON()
	if string(a) != string(b) {
		t.Errorf("canonical form with about:\n%s\nwithout:\n%s", a, b)
	}
}

// TestAboutStrict: the shape of "about" is checked, errors naming the path.
func TestAboutStrict(t *testing.T) {
	for _, tc := range []struct{ about, field string }{
		{`[]`, "about"},
		{`{"titel": "x"}`, "about.titel"},
		{`{"sources": []}`, "about.sources"},
		{`{"sources": [""]}`, "about.sources[0]"},
		{`{"sources": [1]}`, "about.sources[0]"},
		{`{"checked": [2040, 2000]}`, "about.checked"},
		{`{"checked": [2000]}`, "about.checked"},
		{`{"differences": [{"dates": ["2022-13-01"], "against": "x", "reason": "y"}]}`, "about.differences[0].dates[0]"},
		{`{"differences": [{"dates": ["2022-12-01"], "reason": "y"}]}`, "about.differences[0].against"},
		{`{"differences": [{"dates": ["2022-12-01"], "against": "x"}]}`, "about.differences[0].reason"},
		{`{"differences": [{"dates": ["2022-12-01"], "against": "", "reason": "y"}]}`, "about.differences[0].against"},
		{`{"differences": [{"dates": ["2022-12-01"], "against": "x", "reason": "y", "why": 1}]}`, "about.differences[0].why"},
		{`{"title": "a", "title": "b"}`, "about.title"},
	} {
		_, err := calendar.Parse([]byte(`{"zone": "UTC", "about": ` + tc.about + `}`))
		var ce *calendar.Error
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("about %s: error %v, want one naming %s", tc.about, err, tc.field)
		}
	}
}
