package fires_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// An engine fires a one-shot schedule into the fire stream, where a worker
// reads it.
func ExampleEngine() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	srv, _ := natsembed.Start(ctx, natsembed.Config{StoreDir: dir})
	defer srv.Shutdown()
	nc, _ := nats.Connect(srv.ClientURL())
	defer nc.Close()
	js, _ := jetstream.New(nc)

	_ = jsstore.Setup(ctx, js, jsstore.SetupConfig{})
	store, _ := jsstore.Open(ctx, js, kvstore.Layout{})
	engine, _ := fires.New(fires.Config{Store: store})
	_ = engine.Start(ctx)
	defer engine.Stop(context.Background())

	at := time.Now().Add(500 * time.Millisecond)
	_, _ = store.PutSpec(ctx, "welcome", kvstore.Spec{Workflow: "email", At: &at, Input: []byte(`{"to":"ada"}`)})

	cons, _ := js.OrderedConsumer(ctx, "SCHED_FIRES", jetstream.OrderedConsumerConfig{})
	msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	meta, _ := kvstore.ParseFireMeta(msg.Headers())
	fmt.Println(msg.Subject(), meta.ScheduleID, string(msg.Data()))
	// Output: sched.fire.email.welcome welcome {"to":"ada"}
}
