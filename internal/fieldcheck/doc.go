// Package fieldcheck holds the checks every record field passes before it
// is written and again when it is read (sizes, text, JSON nesting, names,
// times), and the errors they return. pkg/kvstore re-exports the errors
// (kvstore.FieldError, kvstore.ErrInvalid) and the limits; the checks
// themselves are the engine's, shared by the admin API, the CLI, the
// clients and the timer engine.
package fieldcheck
