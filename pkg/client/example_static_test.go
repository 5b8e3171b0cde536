package client_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/usererr"
	"github.com/jetsched/jetsched/pkg/client"
)

// A service declares its static schedules in code: the set owns them.
// Declaring it again at the next start writes nothing, a schedule that
// left the set is removed, and nothing but the set changes them.
func ExampleClient_Static() {
	c, _, stop := example()
	defer stop()
	ctx := context.Background()
	invoice := client.StaticSchedule{Workflow: "invoice", Recurrence: client.Cron("0 9 1 * *"),
		Options: []client.Option{client.WithKey("monthly-invoice"), client.InZone("Europe/Paris")}}
	reminder := client.StaticSchedule{Workflow: "remind", Input: map[string]int{"days": 3}, Recurrence: client.Cron("0 9 * * MON")}

	res, err := c.Static(ctx, "billing-service", invoice, reminder)
	fmt.Println(len(res.Created), err)
	res, _ = c.Static(ctx, "billing-service", invoice, reminder) // the next start
	fmt.Println(len(res.Unchanged))
	info, _ := c.Get(ctx, "monthly-invoice")
	fmt.Println(info.Static)

	_, err = c.Schedule(ctx, "invoice", nil, client.Cron("0 10 1 * *"), client.WithKey("monthly-invoice"))
	fmt.Println(errors.Is(err, client.ErrStatic))
	fmt.Println(usererr.Message(err))
	fmt.Println(c.Pause(ctx, "monthly-invoice", "quarter close", time.Time{}))

	res, _ = c.Static(ctx, "billing-service", invoice) // the reminder left the code
	fmt.Println(len(res.Removed), len(res.Unchanged))
	// Output:
	// 2 <nil>
	// 2
	// billing-service
	// true
	// schedule "monthly-invoice" is static: declared in billing-service (scheduler run --schedules or client.Static); change it there
	// <nil>
	// 1 1
}
