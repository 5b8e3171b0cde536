package kvstore

import (
	"errors"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/strictjson"
)

// Caps on what users write. They keep every record, fire message and
// admin API reply well under NATS's default 1 MiB max payload, and every
// value that becomes a message header (notes, conditions) well under
// JetStream's 64 KiB header limit. They are checked at the edge (the CLI
// and the admin API refuse an oversized value before anything is
// written, naming the field) and again when a record is read, so a value
// written straight into a bucket above a cap is reported invalid. A
// spec's input and a timer's payload also nest at most 64 deep
// (`{"a":[1]}` is 2 deep; docs/records.md).
const (
	// MaxInputBytes caps a spec's input and a timer's payload: the body of
	// the fire or wakeup message.
	MaxInputBytes = fieldcheck.MaxInputBytes
	// MaxNoteBytes caps free text: pause, trigger and backfill notes
	// (trigger and backfill notes travel as the Sched-Note header), a
	// spec's description, a timer's condition, a calendar holiday's name.
	MaxNoteBytes = fieldcheck.MaxNoteBytes
	// MaxFieldBytes caps every other text field of a spec (cron, tz,
	// durations, ...).
	MaxFieldBytes = 1 << 10
)

// duplicateKey turns a *strictjson.DuplicateKeyError into a *FieldError
// naming the top-level field that holds the repeated key (record when
// there is none).
func duplicateKey(err error, record string) error {
	var dup *strictjson.DuplicateKeyError
	if !errors.As(err, &dup) {
		return err
	}
	field := dup.Field()
	if field == "" {
		field = record
	}
	return &FieldError{Field: field, Err: dup}
}
