package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/pkg/client"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// example runs an embedded server with jetsched's buckets and a scheduler
// (fire and wakeup engines, admin API), and returns a client; stop tears
// it down.
func example() (c *client.Client, js jetstream.JetStream, stop func()) {
	return exampleIn(kvstore.Layout{}, natsembed.Config{})
}

// exampleIn is example with the scheduler on layout and the server as cfg
// says (its StoreDir is set here). A failure to set up panics: examples
// show the client, not the harness.
func exampleIn(layout kvstore.Layout, cfg natsembed.Config, opts ...client.ClientOption) (c *client.Client, js jetstream.JetStream, stop func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "jetsched-example")
	must(err)
	cfg.StoreDir = dir
	srv, err := natsembed.Start(ctx, cfg)
	must(err)
	nc, err := nats.Connect(srv.ClientURL())
	must(err)
	js, err = jetstream.New(nc)
	must(err)
	must(jsstore.Setup(ctx, js, jsstore.SetupConfig{Layout: layout}))
	store, err := jsstore.Open(ctx, js, layout)
	must(err)
	fe, err := fires.New(fires.Config{Store: store, Instance: "example"})
	must(err)
	must(fe.Start(ctx))
	we, err := timers.New(timers.Config{Store: store, Owner: fe, Instance: "example"})
	must(err)
	must(we.Start(ctx))
	api, err := adminapi.Start(ctx, adminapi.Config{Conn: nc, Store: store})
	must(err)
	c, err = client.New(ctx, js, append([]client.ClientOption{client.WithLayout(layout)}, opts...)...)
	must(err)
	return c, js, func() {
		_ = api.Stop()
		we.Stop(context.Background())
		fe.Stop(context.Background())
		nc.Close()
		srv.Shutdown()
		_ = os.RemoveAll(dir)
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// waitPlanned waits until a scheduler has planned the schedule, and
// panics (as must does) when none has within 10 seconds.
func waitPlanned(c *client.Client, key string) client.ScheduleInfo {
	var info client.ScheduleInfo
	must(testwait.Until(10*time.Second, "schedule "+key+" planned", func() error {
		var err error
		info, err = c.Get(context.Background(), key)
		if err == nil && info.Next.IsZero() {
			err = errors.New("no next slot yet")
		}
		return err
	}))
	return info
}

// Services declare their schedules in code and register them at every
// start: the key is the same on every instance, and re-registering keeps
// the cadence.
func ExampleClient_Schedule() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	input := map[string]any{"olderThanDays": 30}
	key, err := c.Schedule(ctx, "cleanup", input, client.Every(time.Hour))
	again, _ := c.Schedule(ctx, "cleanup", map[string]any{"olderThanDays": 30}, client.Every(time.Hour))
	fmt.Println(key, err, key == again)

	named, _ := c.Schedule(ctx, "report", nil, client.Cron("0 9 * * MON-FRI"),
		client.WithKey("weekday-report"), client.InZone("Europe/Paris"), client.WithMisfire(kvstore.MisfireFireOnce, 0))
	fmt.Println(named)

	_, err = c.Schedule(ctx, "report", nil, client.Cron("0 0 30 2 *"))
	fmt.Println(err)
	// Output:
	// cleanup-e25ada0ec13e <nil> true
	// weekday-report
	// invalid cron "0 0 30 2 *": never fires: no date from 1970 to 2199 matches
}

// Get and List show what is registered and when it fires next. List
// returns a page in key order, with the total and the next page's cursor.
func ExampleClient_List() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	_, _ = c.Schedule(ctx, "backup", nil, client.Cron("@daily"), client.WithKey("nightly-backup"))
	_, _ = c.Schedule(ctx, "backup", nil, client.Cron("@weekly"), client.WithKey("weekly-backup"))
	_, _ = c.Schedule(ctx, "report", nil, client.Cron("@monthly"), client.WithKey("monthly-report"))
	info := waitPlanned(c, "nightly-backup")
	fmt.Println(info.Key, info.Workflow, info.Next.Hour(), info.Next.Minute())
	pg, _ := c.List(ctx, client.ListOptions{Workflow: "backup", Limit: 1})
	fmt.Println(pg.Items[0].Key, pg.Total, pg.NextCursor)
	// Output:
	// nightly-backup backup 0 0
	// nightly-backup 2 nightly-backup
}

// Schedules walks every schedule a page at a time.
func ExampleClient_Schedules() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	for i := range 5 {
		_, _ = c.Schedule(ctx, "sync", nil, client.Every(time.Hour), client.WithKey(fmt.Sprintf("sync-%d", i)))
	}
	for info, err := range c.Schedules(ctx, client.ListOptions{Prefix: "sync-", Limit: 2}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(info.Key, " ")
	}
	fmt.Println()
	// Output: sync-0 sync-1 sync-2 sync-3 sync-4
}

// IfRevision refuses to overwrite a schedule someone else changed.
func ExampleIfRevision() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	key, _ := c.Schedule(ctx, "report", nil, client.Cron("@daily"), client.WithKey("report"))
	info, _ := c.Get(ctx, key)
	_, _ = c.Schedule(ctx, "report", nil, client.Cron("@hourly"), client.WithKey("report")) // another writer
	_, err := c.Schedule(ctx, "report", nil, client.Cron("@weekly"), client.WithKey("report"), client.IfRevision(info.Revision))
	fmt.Println(errors.Is(err, client.ErrConflict))
	_, err = c.Schedule(ctx, "report", nil, client.Cron("@weekly"), client.WithKey("report"), client.CreateOnly())
	fmt.Println(errors.Is(err, client.ErrConflict))
	fmt.Println(errors.Is(c.Unschedule(ctx, key, client.IfRevision(info.Revision)), client.ErrConflict))
	// Output:
	// true
	// true
	// true
}

// Unschedule removes a schedule for the whole fleet.
func ExampleClient_Unschedule() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	key, _ := c.Schedule(ctx, "cleanup", nil, client.Every(time.Hour))
	fmt.Println(c.Unschedule(ctx, key))
	_, err := c.Get(ctx, key)
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// true
}

// Pause, Resume, Trigger and Backfill operate a running schedule.
func ExampleClient_Trigger() {
	c, js, stop := example()
	defer stop()
	ctx := context.Background()
	key, _ := c.Schedule(ctx, "report", nil, client.Cron("@monthly"), client.WithKey("monthly-report"))
	waitPlanned(c, key)

	fmt.Println(c.Pause(ctx, key, "quarter close", time.Time{}))
	fmt.Println(c.Resume(ctx, key))
	slot, _ := c.Trigger(ctx, key, "by hand")
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fmt.Println(c.Backfill(ctx, key, from, from.AddDate(0, 2, 0), 10))

	cons, _ := js.OrderedConsumer(ctx, "SCHED_FIRES", jetstream.OrderedConsumerConfig{})
	seen := map[string]bool{}
	for len(seen) < 3 {
		msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			fmt.Println(err)
			return
		}
		seen[msg.Headers().Get("Nats-Msg-Id")] = true
	}
	fmt.Println(seen[slot], seen["monthly-report.backfill-1767225600000"], seen["monthly-report.backfill-1769904000000"])
	// Output:
	// <nil>
	// <nil>
	// <nil>
	// true true true
}

// A workflow sets a timer, and cancels it when the run moves on.
func ExampleClient_Wakeup() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	_, err := c.Wakeup(ctx, wakeup.Request{Run: "order-42", Step: "escalate", Workflow: "approvals",
		When: "48h", Condition: "awaiting_approval", Payload: []byte(`{"order":42}`)})
	fmt.Println(err)
	fmt.Println(c.CancelWakeup(ctx, "order-42", "escalate"))
	_, err = c.CancelWakeup(ctx, "order-42", "escalate")
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// cancelled <nil>
	// true
}

// Get shows one schedule with the scheduler's state.
func ExampleClient_Get() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	key, _ := c.Schedule(ctx, "report", map[string]int{"week": 1}, client.Cron("0 8 * * MON"), client.WithKey("weekly"))
	info := waitPlanned(c, key)
	fmt.Println(info.Workflow, info.Recurrence, string(info.Input), info.Next.Weekday(), info.Next.Hour(), info.State)
	// Output: report cron 0 8 * * MON {"week":1} Monday 8 planned
}

// Pause holds the regular fires until Resume (or a time).
func ExampleClient_Pause() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	key, _ := c.Schedule(ctx, "sync", nil, client.Every(time.Minute), client.WithKey("sync"))
	waitPlanned(c, key)
	_ = c.Pause(ctx, key, "maintenance", time.Time{})
	info, _ := c.Get(ctx, key)
	fmt.Println(info.State, info.Paused.Note)
	_ = c.Resume(ctx, key)
	info, _ = c.Get(ctx, key)
	fmt.Println(info.Paused == nil)
	// Output:
	// paused maintenance
	// true
}

// Backfill replays a past range at a bounded rate.
func ExampleClient_Backfill() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	key, _ := c.Schedule(ctx, "daily-report", nil, client.Cron("@daily"), client.WithKey("daily"))
	waitPlanned(c, key)
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	fmt.Println(c.Backfill(ctx, key, from, from.AddDate(0, 0, 6), 50))
	fmt.Println(c.Backfill(ctx, key, from, from.AddDate(0, 0, -1), 50) != nil) // to before from
	// Output:
	// <nil>
	// true
}

// CancelWakeup cancels a pending timer by run and step.
func ExampleClient_CancelWakeup() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	_, _ = c.Wakeup(ctx, wakeup.Request{Run: "invoice/2026-11", Step: "remind", Workflow: "billing", When: "3 d"})
	out, err := c.CancelWakeup(ctx, "invoice/2026-11", "remind")
	fmt.Println(out, err)
	// Output: cancelled <nil>
}

// Labels say who owns a schedule; List's Selector keeps the schedules
// whose labels match, as `scheduler schedule ls -l` does.
func ExampleWithLabels() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	_, _ = c.Schedule(ctx, "invoices", nil, client.Cron("0 9 1 * *"), client.WithKey("monthly-invoices"),
		client.WithLabels(map[string]string{"team": "billing", "tier": "gold"}))
	_, _ = c.Schedule(ctx, "reminders", nil, client.Cron("0 9 * * *"), client.WithKey("daily-reminders"),
		client.WithLabels(map[string]string{"team": "billing", "tier": "silver"}))
	_, _ = c.Schedule(ctx, "reindex", nil, client.Every(time.Hour), client.WithKey("hourly-reindex"),
		client.WithLabels(map[string]string{"team": "search"}))
	pg, _ := c.List(ctx, client.ListOptions{Selector: "team=billing,tier!=silver"})
	for _, it := range pg.Items {
		fmt.Println(it.Key, it.Labels["tier"])
	}
	_, err := c.Schedule(ctx, "x", nil, client.Every(time.Hour), client.WithLabels(map[string]string{"team": "bil ling"}))
	fmt.Println(err)
	_, err = c.List(ctx, client.ListOptions{Selector: "team billing"})
	fmt.Println(err)
	// Output:
	// monthly-invoices gold
	// invalid labels.team "bil ling": character ' ' at byte 3 is not allowed in a value (use letters, digits, '-', '_', '.'; a letter or digit first and last)
	// invalid selector "team billing": want =, !=, in or notin after key team at byte 5 (the form: k=v,k2!=v2,k3 in (a,b),!k4; docs/cli.md)
}
