package fieldcheck_test

import (
	"errors"
	"testing"

	"github.com/jetsched/jetsched/internal/fieldcheck"
)

func TestConditionBuckets(t *testing.T) {
	if err := fieldcheck.ConditionBuckets([]string{"runs", "orders-2"}, "sched"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"sched_audit_head"}, {"sched_wakeups"}, {"runs", "runs"}, {"ru.ns"}, {""}, {"KV_x*"}} {
		err := fieldcheck.ConditionBuckets(bad, "sched")
		var fe *fieldcheck.FieldError
		if !errors.As(err, &fe) || fe.Field != "condition-buckets" || !errors.Is(err, fieldcheck.ErrInvalid) {
			t.Errorf("%q: err %v, want a FieldError on condition-buckets", bad, err)
		}
	}
	if err := fieldcheck.ConditionBuckets([]string{"acme_state"}, "acme"); err == nil {
		t.Error("another layout's own bucket accepted")
	}
}

func TestConditionKey(t *testing.T) {
	for in, ok := range map[string]bool{
		"runs/r1": true, "runs/a/b.c=d": true, "runs": false, "/k": false, "runs/": false,
		"ru.ns/k": false, "runs/.k": false, "runs/k.": false, "runs/k*": false,
	} {
		b, k, err := fieldcheck.ConditionKey(in)
		if (err == nil) != ok {
			t.Errorf("ConditionKey(%q) = %q, %q, %v; want ok=%v", in, b, k, err, ok)
		}
	}
}
