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
// The forms a due time may be written in are in forms.go and
// docs/timers.md.
package wakeup
