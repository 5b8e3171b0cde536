package kvstore

import "errors"

// The audit trail is written ahead of every change the store makes for a
// user (docs/operations.md, "Audit trail: written ahead"): an intent entry
// first, and only once it is appended the write, which carries the
// intent's trail sequence in the header AuditSeqHeader. A trail that
// cannot be appended refuses the change (ErrAuditUnavailable): nothing is
// written.

// AuditSeqHeader is the header of a key-value write made through an
// audited store: the trail sequence of the write's intent entry (decimal).
const AuditSeqHeader = "Sched-Audit-Seq"

// ErrAuditUnavailable is returned when a change was refused because its
// intent could not be appended to the audit trail (the trail's stream is
// full, unreachable or refuses the append). Nothing was changed; retry
// once the trail accepts appends again. The admin API's code is
// audit_unavailable.
var ErrAuditUnavailable = errors.New("kvstore: audit trail unavailable")
