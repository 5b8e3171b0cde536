package fire_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/wakeup"
)

// Example runs a scheduler inside a program: a fire engine and a timer
// engine on one set of buckets, a schedule, and its first fire read back.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fire-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	srv, err := natsembed.Start(ctx, natsembed.Config{StoreDir: dir, Port: -1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		fmt.Println(err)
		return
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fires, err := fire.New(fire.Config{Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := fires.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer fires.Stop(ctx)
	timers, err := wakeup.New(wakeup.Config{Store: store, Owner: fires, Instance: fires.Instance()})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := timers.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer timers.Stop(ctx)

	if _, err := store.PutSpec(ctx, "hello", kvstore.Spec{Workflow: "greet", Every: "1s", Input: []byte(`{"to":"world"}`)}); err != nil {
		fmt.Println(err)
		return
	}
	cons, err := js.OrderedConsumer(ctx, "SCHED_FIRES", jetstream.OrderedConsumerConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	meta, err := kvstore.ParseFireMeta(m.Headers())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Subject(), meta.ScheduleID, string(m.Data()))
	// Output: sched.fire.greet.hello hello {"to":"world"}
}
