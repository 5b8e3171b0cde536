// Package kvstore is jetsched's records contract on JetStream: the names
// of its buckets, streams and subjects (Layout), the JSON records kept in
// them (Spec, State, Claim, Tick, Timer) with their strict decoding, the
// headers of fire messages and worker reports (FireMeta, DoneReport), the
// observer events, the limits on inputs, the supported time range, and
// the errors callers branch on (ErrNotFound, ErrConflict, ErrExists,
// ErrInvalid, ErrStatic, ErrAuditUnavailable, *FieldError).
//
// Specs are the user's: they come from the CLI, the Go client, or a plain
// `nats kv put sched_specs ID '<json>'`. State and ticks are the
// scheduler's, written only by CAS (state) or under a claim (ticks). The
// store that reads and writes them is the engine's (internal/jsstore);
// users write through pkg/client or the admin API, which check a spec as
// the scheduler does before anything is written (what a spec means, its
// compiled recurrence and calendar, is the engine's: internal/compile).
//
// A conflict (ErrConflict) means "re-read and re-decide", never "someone
// else has it".
//
// Stability: the record formats, names, headers and event kinds follow
// docs/records.md and docs/protocol.md and change only compatibly (new
// optional fields, new event kinds, new header values); a record written
// by one release is read by the next. The Go API keeps its signatures
// within a major version; new names may be added. Validation may get
// stricter only where the documents say so.
package kvstore
