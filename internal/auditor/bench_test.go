package auditor_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// BenchmarkDigestRound measures what a digest round costs per fire: each
// iteration publishes 10,000 fires with their ledger ticks (not timed),
// then times the round that digests them (ordered consumer read, hashes,
// batched ledger checks, the digest entries). It reports wall and CPU
// (this process: client and embedded server) per 1,000 fires.
//
//	go test -run '^$' -bench DigestRound -benchtime 5x ./internal/auditor
func BenchmarkDigestRound(b *testing.B) {
	const fires = 10_000
	bundle := setup(b, 0)
	ctx := context.Background()
	var wall time.Duration
	var cpu float64
	for i := range b.N {
		b.StopTimer()
		for j := range fires {
			slot := fmt.Sprintf("s.%d.%d", i, j)
			if _, err := bundle.js.PublishAsync("sched.fire.wf", []byte(`{"n":1}`), jetstream.WithMsgID(slot)); err != nil {
				b.Fatal(err)
			}
		}
		<-bundle.js.PublishAsyncComplete()
		fs, _ := bundle.js.Stream(ctx, "SCHED_FIRES")
		last := fs.CachedInfo().State.LastSeq
		for j := range fires {
			tick := kvstore.Tick{Schedule: "s", SlotID: fmt.Sprintf("s.%d.%d", i, j), Status: kvstore.TickDispatched,
				Stream: "SCHED_FIRES", Seq: last - fires + 1 + uint64(j), At: time.Now().UTC()}
			if _, err := bundle.store.PutTickAsync(ctx, tick); err != nil {
				b.Fatal(err)
			}
		}
		<-bundle.js.PublishAsyncComplete()
		cpu0, t0 := cpuSeconds(), time.Now()
		b.StartTimer()
		if err := bundle.a.Round(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		wall += time.Since(t0)
		cpu += cpuSeconds() - cpu0
	}
	n := float64(b.N * fires)
	b.ReportMetric(wall.Seconds()/n*1000, "wall-s/1k-fires")
	b.ReportMetric(cpu/n*1000, "cpu-s/1k-fires")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}
