package cli

import (
	"archive/zip"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// completeTimeout bounds what a completion asks the admin API: a shell
// waits for it at every TAB, and an unreachable scheduler completes
// nothing.
const completeTimeout = 2 * time.Second

// enumNames are the values of the flags that take one of a few words, as
// the records' parsers read them (each list comes from its type's names,
// so that it cannot drift from what is accepted).
func enumNames() map[string][]string {
	return map[string][]string{
		"misfire":      {string(kvstore.MisfireSkip), string(kvstore.MisfireFireOnce), string(kvstore.MisfireFireAll)},
		"overlap":      {string(kvstore.OverlapAllow), string(kvstore.OverlapSkip), string(kvstore.OverlapBufferOne), string(kvstore.OverlapBufferAll), string(kvstore.OverlapCancelOther)},
		"holiday-roll": names(func(i int) fmt.Stringer { return calendar.Roll(i) }),
		"dialect":      names(func(i int) fmt.Stringer { return cronx.Dialect(i) }),
		"dom-dow":      names(func(i int) fmt.Stringer { return cronx.DomDow(i) }),
		"dst-gap":      names(func(i int) fmt.Stringer { return cronx.GapPolicy(i) }),
		"dst-overlap":  names(func(i int) fmt.Stringer { return cronx.OverlapPolicy(i) }),
		"state":        admin.States,
	}
}

// names lists the String of an enum's values 0, 1, ... up to the first
// that has no name (its String is "Type(n)").
func names(value func(int) fmt.Stringer) []string {
	var out []string
	for i := 0; ; i++ {
		s := value(i).String()
		if strings.HasSuffix(s, ")") {
			return out
		}
		out = append(out, s)
	}
}

// addCompletions gives the command tree's arguments and flags their
// completions: schedule ids for the schedule commands that take an ID,
// calendar names for those that take a NAME, zones for --tz and --zone,
// workflows for --workflow, calendar names for --calendar, and the enum
// values. It walks the tree, so that a command added later gets them by
// its Use line and flag names alone.
func (a *app) addCompletions(root *cobra.Command) {
	enums := enumNames()
	var walk func(cmd *cobra.Command, parent string)
	walk = func(cmd *cobra.Command, parent string) {
		if cmd.ValidArgsFunction == nil {
			switch arg := secondWord(cmd.Use); {
			case parent == "schedule" && arg == "ID":
				cmd.ValidArgsFunction = a.firstArg(a.scheduleIDs)
			case parent == "calendar" && (cmd.Name() == "put" || cmd.Name() == "rm"):
				cmd.ValidArgsFunction = a.firstArg(a.storedCalendarNames) // the shipped ones are read-only
			case parent == "calendar" && strings.HasPrefix(arg, "NAME"):
				cmd.ValidArgsFunction = a.firstArg(a.calendarNames)
			}
		}
		complete := func(flag string, fn func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)) {
			if cmd.Flags().Lookup(flag) != nil {
				_ = cmd.RegisterFlagCompletionFunc(flag, fn) // fails only when already registered
			}
		}
		for flag, values := range enums {
			complete(flag, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
		complete("tz", zoneCompletion)
		complete("zone", zoneCompletion)
		complete("workflow", a.completeFrom(a.workflows))
		complete("calendar", a.completeFrom(a.calendarNames))
		for _, c := range cmd.Commands() {
			walk(c, cmd.Name())
		}
	}
	walk(root, "")
}

// secondWord is the word after the command's name in its Use line.
func secondWord(use string) string {
	f := strings.Fields(use)
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// firstArg completes a command's first argument with list, and nothing
// after it.
func (a *app) firstArg(list func(ctx context.Context, prefix string) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return a.completeFrom(list)(cmd, args, toComplete)
	}
}

// completeFrom completes with what list returns within completeTimeout.
func (a *app) completeFrom(list func(ctx context.Context, prefix string) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		ctx, cancel := context.WithTimeout(cmd.Context(), completeTimeout)
		defer cancel()
		return list(ctx, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// scheduleIDs are the ids that start with prefix, from the admin API (one
// page: a shell shows no more); none when it does not answer.
func (a *app) scheduleIDs(ctx context.Context, prefix string) []string {
	var out []string
	for _, v := range a.completionPage(ctx, prefix) {
		out = append(out, v.ID)
	}
	return out
}

// workflows are the workflows of the schedules (of the first page), those
// that start with prefix.
func (a *app) workflows(ctx context.Context, prefix string) []string {
	var out []string
	for _, v := range a.completionPage(ctx, "") {
		if wf := v.Spec.Workflow; strings.HasPrefix(wf, prefix) && !slices.Contains(out, wf) {
			out = append(out, wf)
		}
	}
	slices.Sort(out)
	return out
}

// completionPage is a page of schedules whose id starts with prefix.
func (a *app) completionPage(ctx context.Context, prefix string) []admin.ScheduleInfo {
	if prefix != "" && kvstore.ValidateID(prefix) != nil {
		return nil // no id starts so
	}
	var pg admin.Page[admin.ScheduleInfo]
	if err := a.call(ctx, "schedule.list", admin.ListRequest{Prefix: prefix, Limit: admin.MaxLimit}, &pg); err != nil {
		return nil
	}
	return pg.Items
}

// calendarNames are the names of the stored and the shipped calendars
// that start with prefix.
func (a *app) calendarNames(ctx context.Context, prefix string) []string {
	return a.calendarNamesOf(ctx, prefix, true)
}

// storedCalendarNames are the stored calendars' names that start with
// prefix.
func (a *app) storedCalendarNames(ctx context.Context, prefix string) []string {
	return a.calendarNamesOf(ctx, prefix, false)
}

// calendarNamesOf lists the calendars' names that start with prefix, the
// shipped ones (builtin:NAME) only with builtins.
func (a *app) calendarNamesOf(ctx context.Context, prefix string, builtins bool) []string {
	var pg admin.Page[admin.CalendarRow]
	if err := a.call(ctx, "calendar.list", admin.CalendarListRequest{Limit: admin.MaxLimit}, &pg); err != nil {
		return nil
	}
	var out []string
	for _, c := range pg.Items {
		if strings.HasPrefix(c.Name, prefix) && (builtins || !c.Builtin) {
			out = append(out, c.Name)
		}
	}
	return out
}

// zoneCompletion completes IANA zone names.
func zoneCompletion(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, z := range zoneNames() {
		if strings.HasPrefix(strings.ToLower(z), strings.ToLower(toComplete)) {
			out = append(out, z)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// zoneNames lists the IANA zones where Go's time package finds them: the
// directory or zip of $ZONEINFO, the system's /usr/share/zoneinfo, or the
// Go installation's lib/time/zoneinfo.zip. Sorted; UTC first.
func zoneNames() []string {
	seen := map[string]bool{"UTC": true}
	for _, src := range []string{os.Getenv("ZONEINFO"), "/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ",
		filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip")} {
		if src == "" {
			continue
		}
		if strings.HasSuffix(src, ".zip") {
			zonesInZip(src, seen)
		} else {
			zonesInDir(src, seen)
		}
		if len(seen) > 1 {
			break
		}
	}
	out := make([]string, 0, len(seen))
	for z := range seen {
		out = append(out, z)
	}
	slices.SortFunc(out, func(x, y string) int {
		return cmp.Or(cmp.Compare(boolInt(x != "UTC"), boolInt(y != "UTC")), strings.Compare(x, y))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// zoneName reports whether a path under a zoneinfo root names a zone:
// "Europe/Paris", "UTC", not "posix/...", "right/..." or the tables.
func zoneName(name string) bool {
	if name == "" || name[0] < 'A' || name[0] > 'Z' || strings.ContainsAny(name, ".") ||
		strings.HasPrefix(name, "posix/") || strings.HasPrefix(name, "right/") || name == "Factory" {
		return false
	}
	return true
}

func zonesInDir(root string, seen map[string]bool) {
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err == nil && zoneName(filepath.ToSlash(rel)) {
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
}

func zonesInZip(path string, seen map[string]bool) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return
	}
	defer z.Close()
	for _, f := range z.File {
		if zoneName(f.Name) && !strings.HasSuffix(f.Name, "/") {
			seen[f.Name] = true
		}
	}
}
