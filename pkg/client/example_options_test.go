package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/pkg/client"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// A tenant whose scheduler runs with `scheduler run --name-prefix
// tenant-a` keeps its schedules in tenant-a_specs and fires them on
// tenant-a.fire.<workflow>: WithNamePrefix binds the client to that
// layout.
func ExampleWithNamePrefix() {
	_, js, stop := exampleIn(kvstore.NamedLayout("tenant-a"), natsembed.Config{})
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, js, client.WithNamePrefix("tenant-a"))
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := c.Schedule(ctx, "invoices", nil, client.Cron("0 9 1 * *"), client.WithKey("monthly-invoices"))
	if err != nil {
		fmt.Println(err)
		return
	}
	kv, err := js.KeyValue(ctx, "tenant-a_specs")
	if err != nil {
		fmt.Println(err)
		return
	}
	entry, err := kv.Get(ctx, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(entry.Bucket(), entry.Key())

	// The default layout's buckets do not exist on this system.
	_, err = client.New(ctx, js)
	fmt.Println(err != nil)
	_, err = client.New(ctx, js, client.WithNamePrefix("tenant.a"))
	fmt.Println(err)
	// Output:
	// tenant-a_specs monthly-invoices
	// true
	// client: WithNamePrefix: invalid name-prefix "tenant.a": '.' is not allowed: letters, digits, '_' and '-' only (it names buckets, streams and subjects)
}

// A service that reaches jetsched's JetStream through a domain (a leaf
// node's, say) names it with WithDomain; a JetStream made with
// jetstream.NewWithDomain needs no option.
func ExampleWithDomain() {
	_, js, stop := exampleIn(kvstore.Layout{}, natsembed.Config{Base: &server.Options{JetStreamDomain: "hub"}})
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, js, client.WithDomain("hub"))
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := c.Schedule(ctx, "sync", nil, client.Every(time.Hour), client.WithKey("hourly-sync"))
	fmt.Println(key, err)

	// No JetStream answers in domain "edge" on this system.
	ctx2, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = client.New(ctx2, js, client.WithDomain("edge"))
	fmt.Println(err != nil)
	// Output:
	// hourly-sync <nil>
	// true
}

// Policies are typed constants.
func ExampleWithOverlap() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	key, err := c.Schedule(ctx, "reindex", nil, client.Every(15*time.Minute),
		client.WithOverlap(kvstore.OverlapCancelOther, 10*time.Minute),
		client.WithMisfire(kvstore.MisfireFireOnce, 2*time.Hour),
		client.WithKey("reindex"))
	if err != nil {
		fmt.Println(err)
		return
	}
	info, err := c.Get(ctx, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Recurrence, info.Overlap, info.Misfire)
	// Output: every 15m0s cancel_other fire_once
}

// ScheduleInfo is the client's view of a schedule: its registration and
// what the schedulers know of it.
func ExampleScheduleInfo() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	key, err := c.Schedule(ctx, "payroll", map[string]string{"run": "monthly"}, client.Cron("0 9 15 * *"),
		client.WithKey("payroll"), client.InZone("Europe/Paris"), client.WithDescription("pay day"))
	if err != nil {
		fmt.Println(err)
		return
	}
	info := waitPlanned(c, key)
	fmt.Println(info.Key, info.Workflow, info.Recurrence, info.Zone, string(info.Input), info.Description)
	fmt.Println(info.State, info.Next.In(time.UTC).Day(), info.Overlap, info.Misfire)
	if err := c.Pause(ctx, key, "audit", time.Time{}); err != nil {
		fmt.Println(err)
		return
	}
	if info, err = c.Get(ctx, key); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.State, info.Paused.Note)
	// Output:
	// payroll payroll cron 0 9 15 * * Europe/Paris {"run":"monthly"} pay day
	// planned 15 allow skip
	// paused audit
}

// GetWakeup shows a pending timer; CancelWakeup says whether the cancel
// won the race against the timer's firing.
func ExampleClient_CancelWakeup_outcome() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	if _, err := c.Wakeup(ctx, wakeup.Request{Run: "order-7", Step: "remind", Workflow: "orders", When: "1h",
		Condition: "unpaid"}); err != nil {
		fmt.Println(err)
		return
	}
	t, err := c.GetWakeup(ctx, "order-7", "remind")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.Run, t.Step, t.Workflow, t.When, t.Condition, t.Due.Sub(t.Created).Round(time.Minute))

	out, err := c.CancelWakeup(ctx, "order-7", "remind")
	switch {
	case err != nil:
		fmt.Println(err)
	case out == client.WakeupCancelled:
		fmt.Println("cancelled before it fired")
	case out == client.WakeupAlreadyFired:
		fmt.Println("already firing: the worker's condition check drops it")
	}
	_, err = c.GetWakeup(ctx, "order-7", "remind")
	fmt.Println(errors.Is(err, client.ErrNotFound))
	// Output:
	// order-7 remind orders 1h unpaid 1h0m0s
	// cancelled before it fired
	// true
}
