// Package fires is the fire engine behind pkg/fire and `scheduler run`:
// one goroutine (the loop) owns every schedule's entry and the due index,
// built from KV watches of the specs, state and calendars; workers decide
// (Decide, pure and table-tested) and act: a claim by compare-and-swap on
// the schedule's state record, the publish of the slot's fire with its
// slot id as Nats-Msg-Id (pipelined through internal/pipeline), the
// ledger tick. Shard leases keep instances from racing on every slot;
// the CAS keeps every slot to one fire whoever crashes when. See
// docs/protocol.md and docs/architecture.md.
package fires
