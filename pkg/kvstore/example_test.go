package kvstore_test

import (
	"errors"
	"fmt"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// A spec record is read strictly: a field given twice is refused, naming
// it, as the scheduler does with every record its watch brings.
func ExampleDecodeSpec() {
	spec, err := kvstore.DecodeSpec([]byte(`{"workflow":"billing","cron":"0 9 * * 1-5","tz":"Europe/Paris"}`))
	fmt.Println(spec.RecurrenceString(), err)

	_, err = kvstore.DecodeSpec([]byte(`{"workflow":"billing","cron":"0 9 * * *","cron":"0 10 * * *"}`))
	var fe *kvstore.FieldError
	fmt.Println(errors.As(err, &fe), fe.Field, errors.Is(err, kvstore.ErrInvalid))
	// Output:
	// cron 0 9 * * 1-5 (Europe/Paris) <nil>
	// true cron true
}
