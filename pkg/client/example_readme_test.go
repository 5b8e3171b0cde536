package client_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/client"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// register is the README's registration: a service declares its schedules
// at every start, on every instance.
func register(ctx context.Context, js jetstream.JetStream) error {
	c, err := client.New(ctx, js) // client.WithNamePrefix, client.WithDomain for other layouts
	if err != nil {
		return err
	}
	_, err = c.Schedule(ctx, "invoices", map[string]string{"region": "eu"}, client.Cron("0 9 1 * *"),
		client.WithKey("monthly-invoices"), client.InZone("Europe/Paris"),
		client.WithMisfire(kvstore.MisfireFireOnce, 0), client.WithOverlap(kvstore.OverlapSkip, time.Hour))
	return err
}

// The README's registration, run twice as two instances would, against an
// embedded server with a scheduler.
func Example_readme() {
	c, js, stop := example()
	defer stop()
	ctx := context.Background()
	for range 2 {
		if err := register(ctx, js); err != nil {
			fmt.Println(err)
			return
		}
	}
	info := waitPlanned(c, "monthly-invoices")
	fmt.Println(info.Key, info.Revision, info.Recurrence, info.Zone, info.Misfire, info.Overlap, info.Next.Day())
	// Output: monthly-invoices 1 cron 0 9 1 * * Europe/Paris fire_once skip 1
}
