// Package compile turns a spec record (kvstore.Spec) into the schedule a
// scheduler fires (Compiled): its recurrence parsed in its zone, its
// calendar resolved and applied, its bounds and policies read; and checks a
// record as both its writers (the admin API, the CLI, pkg/client) and its
// readers (the engine, for every record its watch brings) do, naming the
// field that is wrong (CheckRecord, Validate). Zones, parsed crons and
// default calendars are shared between the specs of a process through an
// Interner.
package compile
