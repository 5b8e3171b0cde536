package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/suggest"
)

// flagError puts a flag parsing error of cmd in our words: a bad value
// names the flag, the value and why, without Go's internals
// (`invalid --for "2 horus": unknown unit "horus"; ...`, not
// `strconv.ParseInt: ...`); an unknown flag says which known one is near.
func flagError(cmd *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		return valueError(iv)
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && len(ne.GetSpecifiedName()) > 1 {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		msg := fmt.Sprintf("unknown flag --%s for %q", ne.GetSpecifiedName(), cmd.CommandPath())
		if near := suggest.Nearest(ne.GetSpecifiedName(), names, 2); near != "" {
			msg += "; did you mean --" + near + "?"
		} else {
			msg += fmt.Sprintf("; %q lists its flags", cmd.CommandPath()+" --help")
		}
		return errors.New(msg)
	}
	return err
}

// valueError is a flag's bad value in our words: `invalid --NAME "VALUE":
// REASON`.
func valueError(iv *pflag.InvalidValueError) error {
	return fmt.Errorf("invalid --%s %q: %w", iv.GetFlag().Name, iv.GetValue(), valueReason(iv))
}

// valueReason is why a flag's value is bad: the flag type's own words,
// or for pflag's numbers and booleans ours instead of strconv's.
func valueReason(iv *pflag.InvalidValueError) error {
	f := iv.GetFlag()
	cause := iv.Unwrap()
	var ne *strconv.NumError
	if errors.As(cause, &ne) {
		switch typ := f.Value.Type(); {
		case typ == "bool":
			cause = errors.New("want true or false")
		case strings.HasPrefix(typ, "float"):
			cause = errors.New("want a number")
		case errors.Is(ne.Err, strconv.ErrRange):
			cause = fmt.Errorf("out of range for a %s", typ)
		case strings.HasPrefix(typ, "uint"):
			cause = errors.New("want a whole number, 0 or more")
		default:
			cause = errors.New("want a whole number")
		}
	}
	return cause
}

// unknownCommand is the error for a mistyped subcommand of cmd, with the
// nearest one: `unknown command "lst" for "scheduler schedule"; did you
// mean "ls"?`.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
			names = append(names, c.Aliases...)
		}
	}
	if near := suggest.Nearest(name, names, max(2, len(name)/3)); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", canonicalName(cmd, near))
	} else if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	} else {
		msg += fmt.Sprintf("; %q lists its commands", cmd.CommandPath()+" --help")
	}
	return usageError{errors.New(msg)}
}

// canonicalName is the name of cmd's subcommand called name or one of its
// aliases.
func canonicalName(cmd *cobra.Command, name string) string {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c.Name()
		}
	}
	return name
}

// guardGroups makes every command of the tree under root that only groups
// others (schedule, wakeup, ...) refuse an unknown subcommand with exit 2
// and a suggestion, instead of printing its help and exiting 0; without
// arguments it still prints its help.
func guardGroups(root *cobra.Command) {
	for _, c := range root.Commands() {
		guardGroups(c)
	}
	if !root.HasSubCommands() || root.Runnable() {
		return
	}
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}
