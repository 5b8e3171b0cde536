// Package timers is the wakeup engine behind pkg/wakeup and `scheduler
// run`: a loop over a KV watch of sched_wakeups keeps the due index of the
// timers of the shards this instance owns; workers claim each due timer by
// compare-and-swap, check its condition key, publish the wakeup (pipelined
// through internal/pipeline), record it and delete the timer. See
// docs/timers.md and docs/architecture.md.
package timers
