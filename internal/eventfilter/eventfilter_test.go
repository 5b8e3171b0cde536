package eventfilter_test

import (
	"errors"
	"testing"

	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestParse(t *testing.T) {
	t.Parallel()
	def := eventfilter.Set(nil)
	if def.Has(kvstore.EventFired) || !def.Has(kvstore.EventMissed) || !def.Has(kvstore.EventLeaseLost) {
		t.Fatalf("the default set: %s", def)
	}
	for _, tc := range []struct {
		list string
		has  []kvstore.EventKind
		not  []kvstore.EventKind
	}{
		{"default", []kvstore.EventKind{kvstore.EventMissed, kvstore.EventInvalid}, []kvstore.EventKind{kvstore.EventFired}},
		{"default,fired", []kvstore.EventKind{kvstore.EventMissed, kvstore.EventFired}, nil},
		{"all", eventfilter.SchedulerEvents(), nil},
		{"fired, missed", []kvstore.EventKind{kvstore.EventFired, kvstore.EventMissed}, []kvstore.EventKind{kvstore.EventInvalid, kvstore.EventLeaseGained}},
		{"none", nil, eventfilter.SchedulerEvents()},
	} {
		set, err := eventfilter.Parse(tc.list)
		if err != nil {
			t.Fatalf("%q: %v", tc.list, err)
		}
		for _, k := range tc.has {
			if !set.Has(k) {
				t.Errorf("%q: no %s", tc.list, k)
			}
		}
		for _, k := range tc.not {
			if set.Has(k) {
				t.Errorf("%q: has %s", tc.list, k)
			}
		}
	}
	var fe *kvstore.FieldError
	if _, err := eventfilter.Parse("default,fird"); !errors.As(err, &fe) || fe.Field != "events" || fe.Value != "fird" {
		t.Fatalf("a typo: %v", err)
	}
}
