package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/pflag"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// watchSettle is how long a watch lets changes gather before it reads
// the page again: a burst of writes (an import, a window of fires) is
// one read.
const watchSettle = 200 * time.Millisecond

// watchSpec says how a listing follows its buckets under --watch.
type watchSpec[T any] struct {
	// buckets are the KV buckets whose changes make the page read again
	// (of kvstore.Layout).
	buckets func(kvstore.Layout) []string
	// key is an item's identity (schedule id, timer key); header and row
	// the table's under --watch, without the relative columns.
	key    func(T) string
	header string
	row    func(T) string
	// times are an item's next (fire, due) and last (fire) times, zero
	// when it has none; passed says whether the table has a PASSED
	// column.
	times  func(T) (next, last time.Time)
	passed bool
}

// registerWatch adds --watch to fl.
func (p *pageFlags) registerWatch(fl *pflag.FlagSet) {
	fl.BoolVar(&p.watch, "watch", false, "keep following the page: redraw it on a terminal, else print the rows that change, until Ctrl-C")
}

// watchRun prints the page, then follows the buckets' writes: every
// change makes it read the page again through the admin API. On a
// terminal the table is redrawn at each change and each second (its LEFT
// and PASSED columns move); otherwise only the rows that changed are
// printed (a removed one as "<key> removed"), with --json as JSON lines
// ({"removed": key} for a removed one). A read that fails after the
// first is said on stderr and tried again each second. It returns nil
// when ctx ends (Ctrl-C).
func (l listing[T]) watchRun(ctx context.Context) error {
	if err := l.flags.validate(); err != nil {
		return err
	}
	if l.flags.all {
		return invalidf("--watch follows one page (--limit up to %d, --cursor): it does not go with --all", admin.MaxLimit)
	}
	a := l.a
	nc, err := a.connectAPI()
	if err != nil {
		return err
	}
	defer nc.Close()
	a.apiConn = nc
	defer func() { a.apiConn = nil }()
	// The subscriptions open before the first read, so that no change
	// falls between the two.
	changes := make(chan struct{}, 1)
	for _, b := range l.watch.buckets(kvstore.NamedLayout(a.namePrefix).WithDefaults()) {
		sub, err := subscribeChanges(nc, b, changes)
		if err != nil {
			return err
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	v := l.newView(isTerminal(a.stdout))
	if err := v.refresh(ctx); err != nil {
		return err
	}
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	pending, failed := false, false
	// reread reads the page again; a failure (a scheduler restarting) is
	// said on stderr and the read tried again each second.
	reread := func() {
		err := v.refresh(ctx)
		switch {
		case err == nil:
			failed = false
		case ctx.Err() == nil && !failed:
			failed = true
			fmt.Fprintf(a.stderr, "scheduler: %s; still watching, trying again each second\n", describe(err))
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
			if !pending {
				pending = true
				settle.Reset(watchSettle)
			}
		case <-settle.C:
			pending = false
			reread()
		case <-tick.C:
			switch {
			case failed:
				reread()
			case v.tty:
				v.draw()
			}
		}
	}
}

// subscribeChanges follows the writes of bucket b (every put, delete and
// purge is a message on $KV.<b>.<key>): each signals a change on changes,
// without blocking, one pending signal standing for any number. A plain
// subscription rather than a KV watch (a consumer): the least-privilege
// operator reads the writes through a stream import and may create no
// consumer. A permission refusal is waited for, so that it is said here
// naming the bucket rather than lost in the connection's error handler.
func subscribeChanges(nc *nats.Conn, b string, changes chan<- struct{}) (*nats.Subscription, error) {
	subject := "$KV." + b + ".>"
	sub, err := nc.Subscribe(subject, func(*nats.Msg) {
		select {
		case changes <- struct{}{}:
		default:
		}
	})
	if err == nil {
		err = nc.Flush()
	}
	if err == nil {
		err = nc.LastError()
	}
	if err != nil {
		return nil, fmt.Errorf("--watch: follow bucket %s (subscribe %s): %w", b, subject, err)
	}
	return sub, nil
}

// watchView is a watched page: its items and what was printed of them.
type watchView[T any] struct {
	l     listing[T]
	tty   bool
	items []T
	// shown is each item's row as last printed (not on a terminal).
	shown map[string]string
	first bool
	head  string
}

func (l listing[T]) newView(tty bool) *watchView[T] {
	return &watchView[T]{l: l, tty: tty, shown: map[string]string{}, first: true}
}

// refresh reads the page again and shows it: redrawn on a terminal,
// else its changed rows.
func (v *watchView[T]) refresh(ctx context.Context) error {
	pg, err := v.l.fetch(ctx, v.l.flags.cursor, v.l.flags.limit)
	if err != nil {
		return err
	}
	v.items = pg.Items
	if v.tty {
		v.draw()
		return nil
	}
	return v.printChanges()
}

// header is the table's header under --watch.
func (v *watchView[T]) header() string {
	h := v.l.watch.header + "\tLEFT"
	if v.l.watch.passed {
		h += "\tPASSED"
	}
	return h
}

// line is an item's row with its relative columns at now.
func (v *watchView[T]) line(it T, now time.Time) string {
	next, last := v.l.watch.times(it)
	s := v.l.watch.row(it) + "\t" + leftOf(next, now)
	if v.l.watch.passed {
		s += "\t" + passedOf(last, now)
	}
	return s
}

// draw clears the terminal and prints the page.
func (v *watchView[T]) draw() {
	a := v.l.a
	now := time.Now()
	fmt.Fprint(a.stdout, "\x1b[H\x1b[2J")
	fmt.Fprintf(a.stdout, "%s  watching (Ctrl-C to stop)\n", now.Format("15:04:05"))
	if v.l.head != nil {
		v.l.head(a.stdout)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, v.header())
	for _, it := range v.items {
		fmt.Fprintln(tw, v.line(it, now))
	}
	_ = tw.Flush()
}

// printChanges prints the rows that are new or changed since the last
// read and the keys gone from the page: the whole page the first time.
func (v *watchView[T]) printChanges() error {
	a := v.l.a
	now := time.Now()
	var tw *tabwriter.Writer
	enc := json.NewEncoder(a.stdout)
	if v.first && !a.jsonOut {
		if v.l.head != nil {
			v.l.head(a.stdout)
		}
	}
	out := func(line string) {
		if tw == nil {
			tw = tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			if v.first {
				fmt.Fprintln(tw, v.header())
			}
		}
		fmt.Fprintln(tw, line)
	}
	seen := map[string]bool{}
	for _, it := range v.items {
		k := v.l.watch.key(it)
		seen[k] = true
		row := v.l.watch.row(it)
		if old, ok := v.shown[k]; ok && old == row {
			continue
		}
		v.shown[k] = row
		if a.jsonOut {
			if err := enc.Encode(it); err != nil {
				return err
			}
			continue
		}
		out(v.line(it, now))
	}
	for k := range v.shown {
		if seen[k] {
			continue
		}
		delete(v.shown, k)
		if a.jsonOut {
			if err := enc.Encode(map[string]string{"removed": k}); err != nil {
				return err
			}
			continue
		}
		out(k + "\tremoved")
	}
	if v.first && tw == nil && !a.jsonOut {
		out("") // the header of an empty page
	}
	v.first = false
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

// leftOf is the LEFT column: the time to next, "overdue ..." when it is
// past, "-" when there is none.
func leftOf(next, now time.Time) string {
	switch {
	case next.IsZero():
		return "-"
	case next.Before(now.Add(-time.Second)):
		return "overdue " + relDuration(now.Sub(next))
	}
	return relDuration(next.Sub(now))
}

// passedOf is the PASSED column: the time since last, "-" when none.
func passedOf(last, now time.Time) string {
	if last.IsZero() {
		return "-"
	}
	return relDuration(now.Sub(last)) + " ago"
}

// relDuration writes d to the second, in its two largest units: "45s",
// "4m 12s", "3h 05m", "6d 23h" (counted from the whole seconds, so that
// no unit is rounded up to a full one of the next).
func relDuration(d time.Duration) string {
	s := int64(max(d, 0).Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm %02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %02dh", s/86400, s%86400/3600)
}
