package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/admin"
)

// pageFlags are the flags of every listing: one page of --limit items
// from --cursor, or with --all every page in turn.
type pageFlags struct {
	limit  int
	cursor string
	all    bool
	watch  bool // --watch, on the listings that register it
}

func (p *pageFlags) register(fl *pflag.FlagSet, defaultLimit int, what string) {
	fl.IntVar(&p.limit, "limit", defaultLimit, fmt.Sprintf("%s per page (1 to %d)", what, admin.MaxLimit))
	fl.StringVar(&p.cursor, "cursor", "", "start after this cursor (a previous page's next_cursor)")
	fl.BoolVar(&p.all, "all", false, "print every page in turn (JSON: one item per line)")
}

func (p pageFlags) validate() error {
	if p.limit < 1 || p.limit > admin.MaxLimit {
		return invalidf("--limit %d: must be 1 to %d", p.limit, admin.MaxLimit)
	}
	return nil
}

// listing prints a paginated listing: the first page from --cursor, or
// with --all every page as it arrives, so memory stays bounded however
// many items there are.
//
// Output: a human table (the header once, rows page by page) and, after
// one page that is not the last, a line on stderr with the cursor of the
// next; with --json one page prints as the API's page object
// ({"items", "total", "next_cursor"}), and --all --json prints JSON lines,
// one item per line, nothing else.
type listing[T any] struct {
	a     *app
	flags pageFlags
	what  string // "schedules", for the stderr line
	// fetch gets one page.
	fetch func(ctx context.Context, cursor string, limit int) (admin.Page[T], error)
	// head prints what comes before the table (may be nil); header is the
	// table's tab-separated header line; row one item's line.
	head   func(w io.Writer)
	header string
	row    func(T) string
	// pageJSON, when set, is what --json prints for one page instead of
	// the page itself (status adds its summary).
	pageJSON func(admin.Page[T]) any
	// watch is how the listing follows its buckets under --watch.
	watch *watchSpec[T]
	// workflow is the listing's --workflow filter: when nothing matches,
	// a workflow of the schedules close to it is suggested on stderr.
	workflow string
}

func (l listing[T]) run(ctx context.Context) error {
	if l.flags.watch {
		return l.watchRun(ctx)
	}
	if err := l.flags.validate(); err != nil {
		return err
	}
	a := l.a
	cursor := l.flags.cursor
	var tw *tabwriter.Writer
	enc := json.NewEncoder(a.stdout)
	shown := 0
	for first := true; ; first = false {
		pg, err := l.fetch(ctx, cursor, l.flags.limit)
		if err != nil {
			return err
		}
		switch {
		case a.jsonOut && !l.flags.all:
			if l.pageJSON != nil {
				return writeJSON(a.stdout, l.pageJSON(pg))
			}
			return writeJSON(a.stdout, pg)
		case a.jsonOut:
			for _, it := range pg.Items {
				if err := enc.Encode(it); err != nil {
					return err
				}
			}
		default:
			if first {
				if l.head != nil {
					l.head(a.stdout)
				}
				tw = tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, l.header)
			}
			for _, it := range pg.Items {
				fmt.Fprintln(tw, l.row(it))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		shown += len(pg.Items)
		if shown == 0 && l.flags.cursor == "" {
			a.workflowHint(ctx, l.what, l.workflow)
		}
		if pg.NextCursor == "" {
			return nil
		}
		if !l.flags.all {
			if !a.jsonOut {
				fmt.Fprintf(a.stderr, "%d of %d %s shown; next page: --cursor %s (or --all)\n", shown, pg.Total, l.what, pg.NextCursor)
			}
			return nil
		}
		cursor = pg.NextCursor
	}
}
