package fires_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// BenchmarkMemoryPerSchedule measures what the engine holds per schedule,
// by kind, against a real server: n specs written through the bulk path,
// an engine started, the heap in use after its index is complete (minus
// before), divided by n. Run with
//
//	go test -run '^$' -bench MemoryPerSchedule -benchtime 1x ./pkg/fire
//
// (-benchtime 1x: each kind is one measurement of 20,000 schedules).
func BenchmarkMemoryPerSchedule(b *testing.B) {
	const n = 20_000
	zones := []string{"Europe/Paris", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "UTC"}
	day := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	kinds := []struct {
		name string
		spec func(i int) kvstore.Spec
	}{
		{"interval", func(i int) kvstore.Spec {
			a := day.Add(time.Duration(i) * time.Second)
			return kvstore.Spec{Workflow: "wf", Every: "24h", Anchor: &a}
		}},
		{"cron-5-zones", func(i int) kvstore.Spec {
			return kvstore.Spec{Workflow: "wf", Cron: fmt.Sprintf("%d %d * * *", i%60, (day.Hour()+i%20)%24), TZ: zones[i%len(zones)]}
		}},
		{"cron-calendar", func(i int) kvstore.Spec {
			return kvstore.Spec{Workflow: "wf", Cron: fmt.Sprintf("%d 9 * * 1-5", i%60), TZ: "Europe/Paris", Calendar: "bench", HolidayRoll: "next_business_day"}
		}},
		{"business-hours", func(i int) kvstore.Spec {
			return kvstore.Spec{Workflow: "wf", Cron: fmt.Sprintf("%d %d * * *", i%60, (day.Hour()+i%20)%24), TZ: zones[i%len(zones)], BusinessHoursOnly: true}
		}},
	}
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				srv := natstest.Start(b)
				js, store := srv.Store(b)
				ctx := context.Background()
				if _, err := store.PutCalendar(ctx, "bench", []byte(`{"zone":"Europe/Paris","holidays":[{"name":"New Year","date":"01-01"},{"name":"Labour Day","date":"05-01"},{"name":"Christmas","date":"12-25"}]}`)); err != nil {
					b.Fatal(err)
				}
				for i := range n {
					data, err := k.spec(i).Encode()
					if err != nil {
						b.Fatal(err)
					}
					if _, err := js.PublishAsync(jsname.KV(js, "sched_specs", fmt.Sprintf("s%06d", i)), data); err != nil {
						b.Fatal(err)
					}
				}
				<-js.PublishAsyncComplete()
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				e, err := fires.New(fires.Config{Store: store})
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Start(ctx); err != nil {
					b.Fatal(err)
				}
				<-e.Ready()
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n, "B/schedule")
				e.Stop(context.Background())
			}
		})
	}
}
