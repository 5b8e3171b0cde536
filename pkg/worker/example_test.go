package worker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// exampleJetStream runs an embedded server with jetsched's streams; stop
// tears it down. A failure to set up panics: examples show the worker,
// not the harness.
func exampleJetStream() (js jetstream.JetStream, stop func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "worker-example")
	must(err)
	srv, err := natsembed.Start(ctx, natsembed.Config{StoreDir: dir})
	must(err)
	nc, err := nats.Connect(srv.ClientURL())
	must(err)
	js, err = jetstream.New(nc)
	must(err)
	must(jsstore.Setup(ctx, js, jsstore.SetupConfig{}))
	return js, func() {
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

// publishExampleFire publishes what a scheduler publishes for a slot of
// monthly-invoices.
func publishExampleFire(js jetstream.JetStream) error {
	m := nats.NewMsg("sched.fire.invoices.monthly-invoices")
	m.Header.Set(kvstore.HeaderScheduleID, "monthly-invoices")
	m.Header.Set(kvstore.HeaderScheduledAt, time.Now().Format(time.RFC3339Nano))
	m.Data = []byte(`{"month":"2026-11"}`)
	_, err := js.PublishMsg(context.Background(), m, jetstream.WithMsgID("monthly-invoices.1796112000000"))
	return err
}

// A worker handles the fires of a workflow; what the handler returns
// steers the delivery.
func ExampleWorker() {
	js, stop := exampleJetStream()
	defer stop()
	ctx := context.Background()

	done := make(chan struct{})
	w, err := worker.New(worker.Config{JetStream: js, Name: "billing-service", BackOff: []time.Duration{100 * time.Millisecond}})
	if err != nil {
		fmt.Println(err)
		return
	}
	err = w.Handle("invoices", func(_ context.Context, f worker.Fire) error {
		if f.Delivery == 1 {
			return errors.New("database busy") // nak'ed: redelivered after the backoff
		}
		fmt.Printf("invoicing for %s (delivery %d): %s\n", f.ScheduleID, f.Delivery, f.Input)
		close(done)
		return nil // acked, reported completed on sched.done.<workflow>.<schedule id>
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if err := publishExampleFire(js); err != nil {
		fmt.Println(err)
		return
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		fmt.Println("no fire handled within 10s")
	}
	fmt.Println(w.Stop(ctx))
	// Output:
	// invoicing for monthly-invoices (delivery 2): {"month":"2026-11"}
	// <nil>
}
