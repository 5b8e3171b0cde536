package jsstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

func TestCheckConditionBucket(t *testing.T) {
	t.Parallel()
	if err := jsstore.CheckConditionBucket("runs/k", []string{"runs"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key     string
		allowed []string
		want    string
	}{
		{"tenant_b/k", []string{"runs"}, `bucket "tenant_b" is not a condition bucket of this scheduler (it reads runs;`},
		{"runs/k", nil, "(it reads none;"},
		{"sched_audit_head/head", []string{"runs"}, `bucket "sched_audit_head"`},
		{"runs", []string{"runs"}, "condition_key"},
	} {
		err := jsstore.CheckConditionBucket(c.key, c.allowed)
		var fe *kvstore.FieldError
		if !errors.As(err, &fe) || fe.Field != "condition_key" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s in %q: %v, want %q", c.key, c.allowed, err, c.want)
		}
	}
}
