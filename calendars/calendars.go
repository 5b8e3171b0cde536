// Package calendars holds the business calendars that ship with jetsched,
// embedded in the binary: rule files in the JSON form of pkg/calendar
// (docs/calendar.md), one per country, state or market, each stating in
// its "about" member its sources, the years it was checked for and its
// known differences from the references.
//
// A shipped calendar is named "builtin:" and its file name without
// ".json" (builtin:uk-england) wherever a calendar name is accepted: a
// schedule's or timer's calendar, scheduler calendar check, the admin
// API. It is resolved from the binary, without a record in the calendars
// bucket, whose names cannot start with "builtin:".
package calendars

import (
	"embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jetsched/jetsched/internal/fieldcheck"
	"github.com/jetsched/jetsched/internal/suggest"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
)

// Prefix starts the name of every shipped calendar.
const Prefix = fieldcheck.BuiltinPrefix

// ErrNotFound is returned (wrapped) for a builtin: name that no shipped
// calendar has.
var ErrNotFound = errors.New("no such shipped calendar")

// files are the shipped calendars. The embedded file system is read-only.
//
//go:embed *.json
var files embed.FS

// Names lists the shipped calendars' names, with the Prefix, sorted.
func Names() []string {
	entries, _ := files.ReadDir(".") // the embedded root always reads
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, Prefix+strings.TrimSuffix(e.Name(), ".json"))
	}
	slices.Sort(names)
	return names
}

// IsBuiltin reports whether name is in the shipped calendars' namespace
// (starts with Prefix), whether or not such a calendar ships.
func IsBuiltin(name string) bool { return strings.HasPrefix(name, Prefix) }

// JSON returns the file of the shipped calendar name ("builtin:us-federal"),
// with its "about" member; ErrNotFound (wrapped, with a did-you-mean, not
// naming name) when none ships under that name.
func JSON(name string) ([]byte, error) {
	base, ok := strings.CutPrefix(name, Prefix)
	if !ok || base == "" || strings.ContainsAny(base, `/\.`) {
		return nil, notFound(name)
	}
	data, err := files.ReadFile(base + ".json")
	if err != nil {
		return nil, notFound(name)
	}
	return data, nil
}

// Parse returns the shipped calendar name ("builtin:uk-england"), its zone
// loaded through zones (nil loads it anew); ErrNotFound when none ships
// under that name.
func Parse(name string, zones *cronx.Zones) (*calendar.Calendar, error) {
	data, err := JSON(name)
	if err != nil {
		return nil, err
	}
	cal, err := calendar.ParseZones(data, zones)
	if err != nil { // not reached: every shipped file is tested to parse
		return nil, fmt.Errorf("shipped calendar %s: %w", name, err)
	}
	return cal, nil
}

// notFound is ErrNotFound for name, with the nearest shipped name; the
// caller names name.
func notFound(name string) error {
	if len(name) > 64 { // far from every name: no edit distance to compute
		return fmt.Errorf("%w (scheduler calendar ls lists them)", ErrNotFound)
	}
	if near := suggest.Nearest(name, Names(), 3); near != "" {
		return fmt.Errorf("%w; did you mean %s? (scheduler calendar ls lists them)", ErrNotFound, near)
	}
	return fmt.Errorf("%w (scheduler calendar ls lists them)", ErrNotFound)
}
