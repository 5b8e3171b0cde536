package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// runWorker is the README's worker: it handles the invoices workflow's
// fires until ctx ends, then stops gracefully.
func runWorker(ctx context.Context, js jetstream.JetStream) error {
	w, err := worker.New(worker.Config{JetStream: js, Name: "billing", MaxWorkers: 8, Timeout: 5 * time.Minute})
	if err != nil {
		return err
	}
	err = w.Handle("invoices", func(ctx context.Context, f worker.Fire) error {
		return invoice(ctx, f.Input) // nil acks; worker.Retry(err, d) retries later; worker.Permanent(err) gives up
	})
	if err != nil {
		return err
	}
	if err := w.Start(context.WithoutCancel(ctx)); err != nil { // a signal stops it below, gracefully
		return err
	}
	<-ctx.Done()
	grace, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.Stop(grace); err != nil { // stop fetching; running fires get 30s
		return w.StopAndCancel(context.Background()) // then cancel them: they are redelivered
	}
	return nil
}

func invoice(_ context.Context, input []byte) error {
	fmt.Printf("invoicing %s\n", input)
	return nil
}

// The README's worker, run against an embedded server: one fire is
// handled, its completion reported, then the worker stops.
func Example_readme() {
	js, stop := exampleJetStream()
	defer stop()
	ctx := context.Background()
	reports, err := js.Conn().SubscribeSync("sched.done.invoices.>")
	if err != nil {
		fmt.Println(err)
		return
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	exited := make(chan error, 1)
	go func() { exited <- runWorker(runCtx, js) }()

	// Publish once the worker's consumer exists (it starts with new messages).
	err = testwait.Until(10*time.Second, "the worker's consumer", func() error {
		_, err := js.Consumer(ctx, "SCHED_FIRES", "billing-fire-invoices")
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := publishExampleFire(js); err != nil {
		fmt.Println(err)
		return
	}
	report, err := reports.NextMsg(10 * time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	var d kvstore.DoneReport
	if err := json.Unmarshal(report.Data, &d); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(report.Subject, d.SlotID, d.Outcome)
	cancel()
	fmt.Println("stopped:", <-exited)
	// Output:
	// invoicing {"month":"2026-11"}
	// sched.done.invoices.monthly-invoices monthly-invoices.1796112000000 completed
	// stopped: <nil>
}
