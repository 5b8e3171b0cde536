package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/timearg"
)

// durationValue is a pflag.Value of a duration in the grammar of
// timearg.ParseDuration; it replaces pflag's own duration flag (Go's grammar). A
// config file's or environment variable's value goes through Set too, so
// config keys share the grammar.
type durationValue = timearg.FlagValue

var _ pflag.Value = durationValue{}

// durationVar defines a duration flag on fs, as fs.DurationVar does.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{P: p}, name, usage)
}

// signedDurationVar is durationVar for an offset that may be negative
// ("-30s").
func signedDurationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{P: p, Signed: true}, name, usage)
}
