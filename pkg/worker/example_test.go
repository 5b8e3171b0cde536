package worker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natsembed"
	"github.com/jetsched/jetsched/pkg/fire"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// A worker handles the fires of a workflow; what the handler returns steers
// the delivery.
func ExampleWorker() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "worker-example")
	defer os.RemoveAll(dir)
	srv, _ := natsembed.Start(ctx, natsembed.Config{StoreDir: dir})
	defer srv.Shutdown()
	nc, _ := nats.Connect(srv.ClientURL())
	defer nc.Close()
	js, _ := jetstream.New(nc)
	_ = kvstore.Setup(ctx, js, kvstore.SetupConfig{})

	done := make(chan struct{})
	w, _ := worker.New(worker.Config{JetStream: js, Name: "billing-service", BackOff: []time.Duration{100 * time.Millisecond}})
	_ = w.Handle("invoices", func(_ context.Context, f worker.Fire) error {
		if f.Delivery == 1 {
			return errors.New("database busy") // naked: redelivered after the backoff
		}
		fmt.Printf("invoicing for %s (delivery %d): %s\n", f.ScheduleID, f.Delivery, f.Input)
		close(done)
		return nil // acked, reported completed on sched.done.<workflow>.<schedule id>
	})
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	// What a scheduler publishes for a slot.
	m := nats.NewMsg("sched.fire.invoices")
	m.Header.Set(fire.HeaderScheduleID, "monthly-invoices")
	m.Header.Set(fire.HeaderScheduledAt, time.Now().Format(time.RFC3339Nano))
	m.Data = []byte(`{"month":"2026-11"}`)
	_, _ = js.PublishMsg(ctx, m, jetstream.WithMsgID("monthly-invoices.1796112000000"))
	<-done
	// Output: invoicing for monthly-invoices (delivery 2): {"month":"2026-11"}
}
