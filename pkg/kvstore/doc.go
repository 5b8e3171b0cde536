// Package kvstore is jetsched's persistence on JetStream: the names of its
// buckets, streams and subjects (Layout), their creation (Setup), the checks
// that the NATS system can host them (Preflight), the JSON records kept in
// them (Spec, State, Claim, Tick), and a Store that reads and writes those
// records with compare-and-swap on the KV revision.
//
// Specs are the user's: they come from the CLI, the Go client, or a plain
// `nats kv put sched_specs ID '<json>'`. State and ticks are the
// scheduler's, written only by CAS (state) or under a claim (ticks).
//
// CAS conflicts from JetStream (codes 10071 and 10164) surface as ErrConflict.
// A conflict means "re-read and re-decide", never "someone else has it".
package kvstore
