package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// Wakeups lists the pending timers of a run, of a workflow, or all.
func ExampleClient_Wakeups() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	for _, r := range []wakeup.Request{
		{Run: "order-42", Step: "remind", Workflow: "approvals", When: "24h"},
		{Run: "order-42", Step: "escalate", Workflow: "approvals", When: "48h"},
		{Run: "invoice-7", Step: "dun", Workflow: "billing", When: "72h"},
	} {
		if _, err := c.Wakeup(ctx, r); err != nil {
			fmt.Println(err)
			return
		}
	}
	for t, err := range c.Wakeups(ctx, wakeup.Filter{Run: "order-42"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(t.Run, t.Step, t.When)
	}
	for t, err := range c.Wakeups(ctx, wakeup.Filter{Workflow: "billing"}) {
		fmt.Println(t.Run, t.Step, t.Workflow, err)
	}
	// Output:
	// order-42 escalate 48h
	// order-42 remind 24h
	// invoice-7 dun billing <nil>
}

// CancelWakeups cancels every timer of a run that moved on.
func ExampleClient_CancelWakeups() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	for _, step := range []string{"remind", "escalate", "expire"} {
		_, _ = c.Wakeup(ctx, wakeup.Request{Run: "order-42", Step: step, Workflow: "approvals", When: "48 hours"})
	}
	_, _ = c.Wakeup(ctx, wakeup.Request{Run: "order-43", Step: "remind", Workflow: "approvals", When: "48 hours"})

	fmt.Println(c.CancelWakeups(ctx, "order-42"))
	for t := range c.Wakeups(ctx, wakeup.Filter{}) {
		fmt.Println("left:", t.Run, t.Step)
	}
	// Output:
	// 3 <nil>
	// left: order-43 remind
}

// A worker answers a wakeup with "not ready, retry at": RearmWakeup sets
// the timer again with the message's run, step, workflow and condition,
// and counts the re-arm.
func ExampleClient_RearmWakeup() {
	c, js, stop := example()
	defer stop()
	ctx := context.Background()
	// Due now: the scheduler publishes its wakeup at once.
	if _, err := c.Wakeup(ctx, wakeup.Request{Run: "export-9", Step: "poll", Workflow: "exports", At: time.Now(),
		Condition: "running", Payload: []byte(`{"job":9}`), Labels: map[string]string{"team": "data"}}); err != nil {
		fmt.Println(err)
		return
	}
	cons, _ := js.OrderedConsumer(ctx, "SCHED_WAKEUPS", jetstream.OrderedConsumerConfig{})
	msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := wakeup.ParseMeta(msg.Headers()) // in a pkg/worker handler: w.Meta
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Run, m.Step, m.Condition, m.Rearms, m.Labels, string(msg.Data()))

	// Not ready: retry in ten minutes. The timer keeps its labels.
	t, err := c.RearmWakeup(ctx, m, msg.Data(), time.Now().Add(10*time.Minute))
	fmt.Println(t.Run, t.Step, t.Condition, t.Rearms, t.Labels, string(t.Payload), err)

	_, err = c.RearmWakeup(ctx, m, msg.Data(), time.Now().Add(-time.Minute))
	var fe *kvstore.FieldError
	fmt.Println(errors.As(err, &fe) && fe.Field == "at")
	// Output:
	// export-9 poll running 0 map[team:data] {"job":9}
	// export-9 poll running 1 map[team:data] {"job":9} <nil>
	// true
}
