package worker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/jetsched/jetsched/pkg/worker"
)

// benchFires is how many fires each throughput run handles.
const benchFires = 20000

// BenchmarkWorkerThroughput: fires handled per second by a no-op handler
// at MaxWorkers 1, 8 and 64, against a raw JetStream consumer (Consume,
// ack, nothing else) on the same server in the same run. Each run gets
// benchFires messages already in the stream; the clock stops when the
// handler has seen the last one. Run it alone:
//
//	go test -run '^$' -bench BenchmarkWorkerThroughput -benchtime 1x ./pkg/worker
func BenchmarkWorkerThroughput(b *testing.B) {
	srv := natstest.Start(b)
	_, js := srv.Connect(b)
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		b.Fatal(err)
	}
	for _, run := range []struct {
		name       string
		maxWorkers int // 0: the raw consumer
	}{{"raw-consumer", 0}, {"max-workers-1", 1}, {"max-workers-8", 8}, {"max-workers-64", 64}} {
		b.Run(run.name, func(b *testing.B) {
			_, js := srv.Connect(b) // a connection of its own per run
			for range b.N {
				// A workflow (and so slot ids) of its own per call: the
				// stream drops slot ids it saw in its duplicate window.
				wf := fmt.Sprintf("bench%d-%d", run.maxWorkers, time.Now().UnixNano())
				var rate float64
				if run.maxWorkers == 0 {
					rate = rawRate(b, js, wf)
				} else {
					rate = workerRate(b, js, wf, run.maxWorkers)
				}
				b.ReportMetric(rate, "fires/s")
			}
		})
	}
}

// publishBench publishes n fires on sched.fire.<wf>.<wf>, pipelined; one whose
// asynchronous publish failed is published again, synchronously (its
// Nats-Msg-Id makes a repeat harmless).
func publishBench(b *testing.B, js jetstream.JetStream, wf string, n int) {
	b.Helper()
	now := time.Now().Truncate(time.Millisecond)
	msgs := make([]*nats.Msg, n)
	futures := make([]jetstream.PubAckFuture, n)
	for i := range n {
		m := nats.NewMsg("sched.fire." + wf + "." + wf)
		at := now.Add(time.Duration(i) * time.Millisecond)
		m.Header.Set(kvstore.HeaderScheduleID, wf)
		m.Header.Set(kvstore.HeaderWorkflow, wf)
		m.Header.Set(kvstore.HeaderScheduledAt, at.Format(time.RFC3339Nano))
		// A slot id of its own per run: the stream drops a repeated one.
		m.Header.Set(nats.MsgIdHdr, kvstore.SlotID(wf, at))
		msgs[i] = m
		f, err := js.PublishMsgAsync(m)
		if err != nil {
			b.Fatal(err)
		}
		futures[i] = f
	}
	for i, f := range futures {
		select {
		case <-f.Ok():
		case <-f.Err():
			if _, err := js.PublishMsg(context.Background(), msgs[i]); err != nil {
				b.Fatal(err)
			}
		case <-time.After(time.Minute):
			b.Fatal("publish not acknowledged")
		}
	}
}

// rawRate is the rate of a plain durable consumer that acks each message.
func rawRate(b *testing.B, js jetstream.JetStream, wf string) float64 {
	b.Helper()
	ctx := context.Background()
	publishBench(b, js, wf, benchFires)
	cons, err := js.CreateOrUpdateConsumer(ctx, "SCHED_FIRES", jetstream.ConsumerConfig{
		Durable: "raw-" + wf, FilterSubject: "sched.fire." + wf + ".>", AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		b.Fatal(err)
	}
	var seen atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	cc, err := cons.Consume(func(m jetstream.Msg) {
		_ = m.Ack()
		if seen.Add(1) == benchFires {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Stop()
	<-done
	return benchFires / time.Since(start).Seconds()
}

// workerRate is the rate of a worker with a no-op handler: its consumer is
// created by a first Start, the fires published while it is stopped, and
// the second Start handles them.
func workerRate(b *testing.B, js jetstream.JetStream, wf string, maxWorkers int) float64 {
	b.Helper()
	ctx := context.Background()
	var seen atomic.Int64
	done := make(chan struct{})
	w, err := worker.New(worker.Config{JetStream: js, Name: "bench", MaxWorkers: maxWorkers})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Handle(wf, func(context.Context, worker.Fire) error {
		if seen.Add(1) == benchFires {
			close(done)
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for range 2 {
		if err := w.Start(ctx); err != nil {
			b.Fatal(err)
		}
		if err := w.Stop(ctx); err != nil {
			b.Fatal(err)
		}
	}
	publishBench(b, js, wf, benchFires)
	start := time.Now()
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = w.Stop(ctx) }()
	<-done
	return benchFires / time.Since(start).Seconds()
}

// BenchmarkWorkerLatenessWithSlowHandler: 99 schedules fire every second
// on one workflow while one fire of that workflow takes 10 s; the fast
// fires' lateness (handler start minus Sched-Scheduled-At) is measured
// over the 10 s the slow one runs, with a fire engine on the same server:
// at MaxWorkers 1 (a serial worker: they queue behind it), at the default
// MaxWorkers, and at the default without the slow fire (the reference).
// About 20 s per run:
//
//	go test -run '^$' -bench BenchmarkWorkerLatenessWithSlowHandler -benchtime 1x ./pkg/worker
func BenchmarkWorkerLatenessWithSlowHandler(b *testing.B) {
	for _, run := range []struct {
		name       string
		maxWorkers int
		slow       bool
	}{{"no-slow-fire", 0, false}, {"slow-fire-max-workers-1", 1, true}, {"slow-fire-default-max-workers", 0, true}} {
		b.Run(run.name, func(b *testing.B) {
			for range b.N {
				p50, p99, n := latenessRun(b, run.maxWorkers, run.slow)
				b.ReportMetric(p50, "p50-ms")
				b.ReportMetric(p99, "p99-ms")
				b.ReportMetric(float64(n), "fires")
			}
		})
	}
}

func latenessRun(b *testing.B, maxWorkers int, slow bool) (p50, p99 float64, n int) {
	b.Helper()
	srv := natstest.Start(b)
	_, js := srv.Connect(b)
	ctx := context.Background()
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		b.Fatal(err)
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		b.Fatal(err)
	}
	engine, err := fires.New(fires.Config{Store: store, Instance: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := engine.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer engine.Stop(context.Background())

	slowAt := time.Now().Add(4 * time.Second).Truncate(time.Second)
	from, to := slowAt, slowAt.Add(10*time.Second) // the window measured
	var mu sync.Mutex
	var lateness []time.Duration
	finished := make(chan struct{})
	w, err := worker.New(worker.Config{JetStream: js, Name: "lateness", MaxWorkers: maxWorkers})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Handle("report", func(ctx context.Context, f worker.Fire) error {
		if f.ScheduleID == "slow" {
			time.Sleep(10 * time.Second) // the slow fire: models 10 s of work
			return nil
		}
		late := time.Since(f.ScheduledAt)
		if f.ScheduledAt.Before(from) || !f.ScheduledAt.Before(to) {
			if !f.ScheduledAt.Before(to.Add(2 * time.Second)) {
				select {
				case <-finished:
				default:
					close(finished)
				}
			}
			return nil
		}
		mu.Lock()
		lateness = append(lateness, late)
		mu.Unlock()
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = w.StopAndCancel(ctx) }()
	for i := range 99 {
		if _, err := store.PutSpec(ctx, fmt.Sprintf("fast-%02d", i), kvstore.Spec{Workflow: "report", Every: "1s"}); err != nil {
			b.Fatal(err)
		}
	}
	if slow {
		if _, err := store.PutSpec(ctx, "slow", kvstore.Spec{Workflow: "report", At: &slowAt}); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-finished:
	case <-time.After(time.Until(to) + time.Minute):
		b.Fatal("the fires after the window never came")
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lateness)
	if len(lateness) == 0 {
		b.Fatal("no fire in the window")
	}
	pct := func(q float64) float64 {
		return float64(lateness[int(q*float64(len(lateness)-1))].Microseconds()) / 1000
	}
	return pct(0.5), pct(0.99), len(lateness)
}
