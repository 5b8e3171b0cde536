package labels_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/labels"
)

func TestParseSelector(t *testing.T) {
	set := map[string]string{"team": "billing", "tier": "gold", "example.com/owner": "ops"}
	for _, tc := range []struct {
		sel   string
		canon string
		match bool
	}{
		{"", "", true},
		{"team=billing", "team=billing", true},
		{"team==billing", "team=billing", true},
		{" team = billing , tier != silver ", "team=billing,tier!=silver", true},
		{"team!=billing", "team!=billing", false},
		{"region!=eu", "region!=eu", true},
		{"tier in (gold, silver)", "tier in (gold,silver)", true},
		{"tier notin (gold)", "tier notin (gold)", false},
		{"region notin (eu)", "region notin (eu)", true},
		{"example.com/owner", "example.com/owner", true},
		{"!legacy", "!legacy", true},
		{"! team", "!team", false},
		{"team=billing,region", "team=billing,region", false},
		{"team=", "team=", false},
	} {
		sel, err := labels.Parse("selector", tc.sel)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.sel, err)
			continue
		}
		if got := sel.String(); got != tc.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.sel, got, tc.canon)
		}
		if got := sel.Matches(set); got != tc.match {
			t.Errorf("Parse(%q).Matches = %v, want %v", tc.sel, got, tc.match)
		}
		again, err := labels.Parse("selector", sel.String())
		if err != nil || again.String() != sel.String() {
			t.Errorf("canonical form %q does not read back: %v", sel.String(), err)
		}
	}
}

func TestParseSelectorErrors(t *testing.T) {
	for sel, want := range map[string]string{
		"team=billing,":                    "want a label key",
		"team billing":                     "want =, !=, in or notin",
		"tier in gold":                     "want '('",
		"tier in (gold":                    "want ',' or ')'",
		"team=bil ling":                    "want ','",
		"-team=x":                          "not allowed in a key",
		"team=billing!":                    "want ','",
		"team=a/b":                         "not allowed in a value",
		"te$m=x":                           "want =, !=, in or notin",
		"team=" + strings.Repeat("x", 129): "longer than 128",
	} {
		_, err := labels.Parse("selector", sel)
		var fe *fieldcheck.FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want a FieldError saying %q", sel, err, want)
		}
	}
}

func TestParsePairs(t *testing.T) {
	m, err := labels.ParsePairs([]string{"team=billing", "tier=", "example.com/owner=ops"})
	if err != nil || len(m) != 3 || m["tier"] != "" || m["example.com/owner"] != "ops" {
		t.Fatalf("ParsePairs = %v, %v", m, err)
	}
	if got := labels.Format(m); got != "example.com/owner=ops,team=billing,tier=" {
		t.Errorf("Format = %q", got)
	}
	if m, err := labels.ParsePairs(nil); m != nil || err != nil {
		t.Errorf("ParsePairs(nil) = %v, %v", m, err)
	}
	for _, bad := range [][]string{{"team"}, {"team=a", "team=b"}, {"team=a b"}, {"=x"}, {"team.=x"}, {"t=a=b"}} {
		_, err := labels.ParsePairs(bad)
		var fe *fieldcheck.FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "labels") {
			t.Errorf("ParsePairs(%q) = %v, want a FieldError on labels", bad, err)
		}
	}
}

func TestSets(t *testing.T) {
	var s labels.Sets
	a := s.ID(map[string]string{"team": "billing"})
	b := s.ID(map[string]string{"team": "search"})
	if s.ID(nil) != 0 || a == 0 || b == a || s.ID(map[string]string{"team": "billing"}) != a {
		t.Fatalf("ids: nil %d, a %d, b %d", s.ID(nil), a, b)
	}
	if s.Get(a)["team"] != "billing" || s.Get(0) != nil || s.Get(99) != nil {
		t.Errorf("Get: %v %v %v", s.Get(a), s.Get(0), s.Get(99))
	}
	sel, _ := labels.Parse("selector", "team=billing")
	m := s.Matcher(sel)
	if !m(a) || m(b) || m(0) || !m(a) {
		t.Error("Matcher answers wrongly")
	}
	if all := s.Matcher(labels.Selector{}); !all(0) || !all(b) {
		t.Error("the empty selector refused a set")
	}
	both := labels.FromLabels(map[string]string{"team": "billing"}).And(sel)
	if both.String() != "team=billing,team=billing" || !both.Matches(s.Get(a)) {
		t.Errorf("And = %q", both)
	}
}
