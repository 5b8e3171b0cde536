// Package wakeup is jetsched's second clock: timers and delay wakeups that
// resume a workflow run later ("resume run R at step S after 48 working
// hours", "at 02:00", "on 2026-12-31 23:59").
//
// A timer is keyed by (run, step) in the sched_wakeups bucket; registering
// the same key again replaces it. When it is due, a scheduler claims it by
// compare-and-swap on its revision, publishes one message on
// sched.wakeup.<workflow> (stream SCHED_WAKEUPS, Nats-Msg-Id
// "wakeup.<key>.<due ms>"), records it in the ledger and removes it: the
// same claim-and-dedupe discipline as schedule fires (docs/protocol.md).
// Cancelling is a CAS delete at the revision read, so a cancel racing a fire
// ends with exactly one of "fired" and "cancelled" recorded.
//
// The forms a due time may be written in are in docs/timers.md. This
// package is the timers' data contract: Request and Filter say what to
// register and what to list, Meta and ParseMeta read a wakeup message's
// headers, and the Outcome constants name how a cancel ended. Set, get,
// cancel, list and re-arm timers with pkg/client's Client (Wakeup,
// GetWakeup, CancelWakeup, CancelWakeups, Wakeups, RearmWakeup); handle
// wakeups with pkg/worker.
//
// Stability: the record in sched_wakeups, the wakeup message and its
// headers follow docs/timers.md and docs/records.md and change only
// compatibly (new optional fields). The Go API (Request, Filter, Meta,
// ParseMeta, OutcomeCancelled, OutcomeFired) keeps its signatures within
// a major version; new Request and Meta fields may be added. The engine
// that fires timers is not part of it (scheduler run is).
package wakeup
