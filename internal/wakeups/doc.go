// Package wakeups registers, cancels, lists and re-arms timers on the
// engine's store (jsstore), and reads the forms a due time is written in
// (ParseWhen, EvalWhenExpr). The admin API, the CLI, the demo worker and
// the benchmark use it directly; users reach it through pkg/client's Client
// (Wakeup, CancelWakeup, CancelWakeups, Wakeups, RearmWakeup), and its
// data types through the aliases in pkg/wakeup. The engine that fires the
// timers is internal/timers.
package wakeups
