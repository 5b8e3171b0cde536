// Package wakeups registers, cancels and lists timers on the engine's
// store (jsstore), and reads the forms a due time is written in (ParseWhen,
// EvalWhenExpr). The admin API, the CLI and pkg/client use it directly;
// users reach it through pkg/wakeup.Client. The engine that fires the
// timers is internal/timers.
package wakeups
