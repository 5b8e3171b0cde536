package timers_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/timers"
	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// BenchmarkPendingTimers measures the scale of the wakeup engine: N
// pending timers (JETSCHED_BENCH_TIMERS, default 100,000; the issue's
// figure is 1,000,000) are written through the bulk path (async publishes
// to the bucket's subjects), then a scheduler starts. It reports the time
// until the due index is complete, the heap per pending timer, and the
// lateness of 1,000 timers due a few seconds after the start.
//
//	JETSCHED_BENCH_TIMERS=1000000 go test -run '^$' -bench PendingTimers -benchtime 1x -timeout 30m ./internal/timers/
func BenchmarkPendingTimers(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("JETSCHED_BENCH_TIMERS")); err == nil && v > 0 {
		n = v
	}
	for range b.N {
		benchPending(b, n)
	}
}

func benchPending(b *testing.B, n int) {
	srv := natstest.Start(b)
	js, store := srv.Store(b)
	ctx := context.Background()
	const soon = 1000
	start := time.Now()
	dueSoon := start.Add(time.Hour) // rewritten below, once loading time is known
	// Bulk write: far-future timers, then the ones due soon.
	write := func(i int, due time.Time) {
		run := "run-" + strconv.Itoa(i)
		t := kvstore.Timer{Run: run, Step: "s", Workflow: "bench", Due: due.UTC(), Created: start.UTC()}
		data, _ := json.Marshal(t)
		if _, err := js.PublishAsync(jsname.KV(js, "sched_wakeups", kvstore.TimerKey(run, "s")), data); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n - soon {
		write(i, start.Add(24*time.Hour+time.Duration(i)*time.Millisecond))
	}
	<-js.PublishAsyncComplete()
	b.Logf("%d timers written in %s", n-soon, time.Since(start).Round(time.Millisecond))

	// Received wakeups, for lateness.
	var mu sync.Mutex
	var late []time.Duration
	got := make(chan struct{}, soon)
	cons, err := js.OrderedConsumer(ctx, "SCHED_WAKEUPS", jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		b.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		meta, err := wakeups.ParseMeta(m.Headers())
		if err != nil {
			return
		}
		mu.Lock()
		late = append(late, time.Since(meta.DueAt))
		mu.Unlock()
		got <- struct{}{}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Stop()

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	t0 := time.Now()
	fe, err := fires.New(fires.Config{Store: store, Instance: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := fe.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer fe.Stop(context.Background())
	we, err := timers.New(timers.Config{Store: store, Owner: fe, Instance: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := we.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer we.Stop(context.Background())
	<-we.Ready()
	indexed := time.Since(t0)
	b.StopTimer()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	// The soon timers: due 3 to 4 seconds from now, spread over a second.
	dueSoon = time.Now().Add(3 * time.Second)
	for i := n - soon; i < n; i++ {
		write(i, dueSoon.Add(time.Duration(i-(n-soon))*time.Millisecond))
	}
	<-js.PublishAsyncComplete()
	deadline := time.After(2 * time.Minute)
	for range soon {
		select {
		case <-got:
		case <-deadline:
			b.Fatalf("only %d of %d due timers fired", len(late), soon)
		}
	}
	mu.Lock()
	slices.Sort(late)
	p50, p99, maxLate := late[len(late)/2], late[len(late)*99/100], late[len(late)-1]
	mu.Unlock()
	perTimer := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	b.ReportMetric(indexed.Seconds(), "s-to-index")
	b.ReportMetric(perTimer, "heap-B/timer")
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-late-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-late-ms")
	b.ReportMetric(float64(maxLate.Microseconds())/1000, "max-late-ms")
	b.Logf("%d pending: index complete in %s, heap %+.0f B per timer; %d due: lateness p50 %s p99 %s max %s",
		n, indexed.Round(time.Millisecond), perTimer, soon, p50.Round(time.Microsecond), p99.Round(time.Microsecond), maxLate.Round(time.Microsecond))
}
