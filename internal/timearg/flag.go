package timearg

import (
	"time"

	"github.com/jetsched/jetsched/pkg/cronx"
)

// FlagValue is a command-line flag of a duration in ParseDuration's
// grammar ("2 hours", "1d 3h", "90s"), with its errors: a flag.Value for
// the standard library's flag package and a pflag.Value (Type) for
// cobra's. It stands in for the packages' own duration flags, which
// read Go's grammar and answer with Go's errors. Signed takes a negative
// duration too (ParseSignedDuration).
type FlagValue struct {
	P      *time.Duration
	Signed bool
}

// Set parses s into *P.
func (v FlagValue) Set(s string) error {
	parse := ParseDuration
	if v.Signed {
		parse = ParseSignedDuration
	}
	d, err := parse(s)
	if err != nil {
		return err
	}
	*v.P = d
	return nil
}

// String writes the duration in the grammar's canonical form ("1d3h").
func (v FlagValue) String() string {
	if v.P == nil {
		return "0s"
	}
	if *v.P < 0 {
		return "-" + cronx.FormatDuration(-*v.P)
	}
	return cronx.FormatDuration(*v.P)
}

// Type names the value in help text.
func (v FlagValue) Type() string { return "duration" }
