// Package jsstore is the engine's store on JetStream: the buckets and
// streams' creation (Setup) and the checks that the NATS system can host
// them (Preflight), and a Store that reads and writes the records of
// pkg/kvstore with compare-and-swap on the KV revision, writes the audit
// trail ahead of users' changes, publishes asynchronously on the fire
// path, watches the buckets, and keeps the engine's own records of
// sched_leases (the window record and the ended lists).
//
// CAS conflicts from JetStream (codes 10071 and 10164) surface as
// kvstore.ErrConflict. A conflict means "re-read and re-decide", never
// "someone else has it".
//
// It is internal: its API changes with the engine. What users rely on is
// the records contract in pkg/kvstore and the clients built on this store
// (pkg/client, pkg/worker).
package jsstore
