// Package admin holds the wire types of jetsched's admin API: the
// requests, replies and error codes of the NATS micro service on
// sched.api.> ("jetsched", discoverable with `nats micro ls`) that every
// scheduler process runs, so that a remote fleet is operated with a NATS
// connection and the rights on sched.api.> alone. Requests and responses
// are JSON (docs/api.md); errors carry a code and, for invalid input, the
// field. pkg/client speaks it for Go, and so can a client in any language.
//
// Stability: the JSON forms of these types, the verbs and the codes are
// the API of Version and change only compatibly (a new optional field, a
// new verb, a new code) until its major version does. The Go names are
// internal: a Go program calls the API through pkg/client. The service
// itself is internal/adminapi.
package admin

// Version is the admin API's version, reported by `nats micro info`.
const Version = "1.6.0"

// Error codes.
const (
	CodeInvalid     = "invalid"     // the request or a spec field is wrong; Field names it
	CodeNotFound    = "not_found"   // no such schedule, calendar, timer, backfill or verb
	CodeConflict    = "conflict"    // a stale if_revision, or create of an existing id
	CodeInUse       = "in_use"      // a calendar that schedules use
	CodeStatic      = "static"      // a put or delete of a static schedule; the message names its file
	CodeUnavailable = "unavailable" // the listing catalogue is still loading
	CodeNotWritten  = "not_written" // schedule.import: a valid item left unwritten, another of its batch refused
	CodeInternal    = "internal"    // anything else
	// CodeAuditUnavailable: the audit trail could not be appended, so the
	// change was refused and nothing changed; retry once the trail takes
	// appends again (docs/operations.md, "Audit trail: written ahead").
	CodeAuditUnavailable = "audit_unavailable"
)

// Error is the body of an error response (also in the Nats-Service-Error
// headers): a code, a message, and the field for invalid input.
type Error struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}
