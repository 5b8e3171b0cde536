package cli

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/timearg"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// durationValue is a pflag.Value of a duration in the grammar of
// timearg.ParseDuration; it replaces pflag's own duration flag (Go's grammar). A
// config file's or environment variable's value goes through Set too, so
// config keys share the grammar.
type durationValue struct {
	p      *time.Duration
	signed bool
}

var _ pflag.Value = durationValue{}

// durationVar defines a duration flag on fs, as fs.DurationVar does.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{p: p}, name, usage)
}

// signedDurationVar is durationVar for an offset that may be negative
// ("-30s").
func signedDurationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var(durationValue{p: p, signed: true}, name, usage)
}

// Set parses s.
func (d durationValue) Set(s string) error {
	parse := timearg.ParseDuration
	if d.signed {
		parse = timearg.ParseSignedDuration
	}
	v, err := parse(s)
	if err != nil {
		return err
	}
	*d.p = v
	return nil
}

// String writes the duration in the grammar's canonical form ("1d3h").
func (d durationValue) String() string {
	if d.p == nil {
		return "0s"
	}
	if *d.p < 0 {
		return "-" + cronx.FormatDuration(-*d.p)
	}
	return cronx.FormatDuration(*d.p)
}

// Type names the value in help text.
func (d durationValue) Type() string { return "duration" }
