package kvstore_test

import (
	"fmt"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A spec is validated before it is written; the error names the field.
func ExampleSpec_Validate() {
	spec, err := kvstore.DecodeSpec([]byte(`{"workflow":"billing","cron":"0 9 * * 1-5","tz":"Europe/Paris"}`))
	fmt.Println(spec.RecurrenceString(), err, spec.Validate("billing-daily"))

	bad := kvstore.Spec{Workflow: "billing", Cron: "0 0 30 2 *"}
	err = bad.Validate("billing-daily")
	fmt.Println(err.(*kvstore.FieldError).Field)
	// Output:
	// cron 0 9 * * 1-5 (Europe/Paris) <nil> <nil>
	// cron
}
