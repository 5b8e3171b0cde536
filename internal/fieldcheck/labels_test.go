package fieldcheck_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/fieldcheck"
)

func TestLabels(t *testing.T) {
	ok := map[string]string{"team": "billing", "tier": "", "example.com/owner": "a.b-c_d", "x": strings.Repeat("v", 128)}
	if err := fieldcheck.Labels(ok); err != nil {
		t.Fatal(err)
	}
	many := map[string]string{}
	for i := range fieldcheck.MaxLabels + 1 {
		many[fmt.Sprint("k", i)] = "v"
	}
	for _, tc := range []struct {
		labels map[string]string
		field  string
	}{
		{map[string]string{"team": "bil ling"}, "labels.team"},
		{map[string]string{"team": "-billing"}, "labels.team"},
		{map[string]string{"team": "billing."}, "labels.team"},
		{map[string]string{"team": "a/b"}, "labels.team"},
		{map[string]string{"te am": "x"}, `labels."te am"`},
		{map[string]string{"/team": "x"}, "labels./team"},
		{map[string]string{"": "x"}, "labels"},
		{map[string]string{"team": strings.Repeat("v", 129)}, "labels.team"},
		{map[string]string{strings.Repeat("k", 129): "v"}, "labels." + strings.Repeat("k", 16) + "…"},
		{many, "labels"},
	} {
		err := fieldcheck.Labels(tc.labels)
		var fe *fieldcheck.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, fieldcheck.ErrInvalid) {
			t.Errorf("Labels(%v) = %v, want a FieldError on %s", tc.labels, err, tc.field)
		}
	}
}
