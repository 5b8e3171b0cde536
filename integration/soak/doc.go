// Package soak holds jetsched's soak test (TestSoak): an embedded
// nats-server, a fleet of three `scheduler run` processes built from this
// tree, 10,000 schedules, a worker acking every fire, operator chaos and
// instance restarts for as long as JETSCHED_SOAK says (10m, 1h). Every
// minute it reports each instance's RSS, goroutines, open files, fires and
// lateness (test log and a CSV file); at the end it asserts exactly once
// over the whole run and that each instance's resources stayed flat after
// its warm-up. Without JETSCHED_SOAK it skips: it is not part of CI (its
// pure accounting and flatness rules are, as unit tests).
// docs/reliability.md ("Soak") says how to run it and what it found.
package soak
