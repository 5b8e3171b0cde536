// Package links holds jetsched's slow- and broken-link tests: a fleet of
// `scheduler run` processes, each reaching the nats-server through a TCP
// proxy of its own (toxiproxy, as a library in the test process: this
// kernel has no sch_netem), under nemeses that slow, jitter, throttle,
// freeze and reset those links, while a checker connected directly to the
// server counts every slot of SCHED_FIRES: expected, fired, duplicated,
// lost, and how late. Each nemesis prints a FAULT links-<name> line;
// docs/reliability.md ("Slow and broken links") has the figures of a run.
package links
