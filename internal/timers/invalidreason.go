package timers

import (
	"errors"
	"strings"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// invalidRecordReason is the reason a record that fails validation is
// recorded with (ledger entry and event): "invalid record: <field>:
// <why>", the field from err when it is a *kvstore.FieldError ("record"
// otherwise).
func invalidRecordReason(err error) (field, reason string) {
	field, why := "record", err.Error()
	if fe := (*kvstore.FieldError)(nil); errors.As(err, &fe) {
		field = fe.Field
		why = strings.TrimPrefix(strings.TrimPrefix(why, "invalid "+fe.Field), ": ")
		why = strings.TrimPrefix(why, " ")
	}
	return field, "invalid record: " + field + ": " + why
}
