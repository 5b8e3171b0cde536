package jsstore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// CheckConditionBucket refuses a condition key (already of a valid form)
// whose bucket is not one of allowed, the buckets the scheduler was
// configured to read (scheduler run --condition-buckets): a timer must not
// make the scheduler read another tenant's bucket or its own. The error is
// a *FieldError naming condition_key.
func CheckConditionBucket(conditionKey string, allowed []string) error {
	bucket, _, err := fieldcheck.ConditionKey(conditionKey)
	if err != nil {
		return &kvstore.FieldError{Field: "condition_key", Value: conditionKey, Err: err}
	}
	if slices.Contains(allowed, bucket) {
		return nil
	}
	which := "it reads none"
	if len(allowed) > 0 {
		which = "it reads " + strings.Join(allowed, ", ")
	}
	return &kvstore.FieldError{Field: "condition_key", Value: conditionKey,
		Reason: fmt.Sprintf("bucket %q is not a condition bucket of this scheduler (%s; scheduler run --condition-buckets names them)", bucket, which)}
}
