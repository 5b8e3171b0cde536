// Package partition holds jetsched's Jepsen-style partition tests: a real
// 3-node NATS cluster (nats-server processes, configs generated from
// natsconf/) and one `scheduler run` process per node, each node in its own
// network namespace on a test-made bridge, under nemeses that cut, bridge,
// degrade and crash the network and the nodes, and jump a scheduler's
// clock. A checker reads SCHED_FIRES from the majority side and counts
// every slot: expected, fired, duplicated, lost, and how late.
//
// The tests need root (ip netns, tc); CI runs them at a small size, and
// JETSCHED_PARTITION=full runs the full size. docs/reliability.md has the
// harness, every nemesis and the figures of a run.
package partition
