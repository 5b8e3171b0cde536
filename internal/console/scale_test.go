package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/adminapi"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// scaleEnv sets how many schedules TestScale writes (unset: the test is
// skipped; docs/console.md records a run with 100000).
const scaleEnv = "JETSCHED_CONSOLE_SCALE"

// TestScale measures the schedule list's time to first byte and the
// console's memory with many schedules:
//
//	JETSCHED_CONSOLE_SCALE=100000 go test -run TestScale -v ./internal/console/
func TestScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(scaleEnv))
	if n <= 0 {
		t.Skipf("set %s=N to measure the console with N schedules", scaleEnv)
	}
	ctx := context.Background()
	srv := natstest.Start(t)
	nc, js := srv.Connect(t)
	if err := jsstore.Setup(ctx, js, jsstore.SetupConfig{}); err != nil {
		t.Fatal(err)
	}
	store, err := jsstore.Open(ctx, js, kvstore.Layout{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	writeSpecs(t, js, n)
	t.Logf("%d schedules written in %s", n, time.Since(t0).Round(time.Millisecond))
	api, err := adminapi.Start(ctx, adminapi.Config{Conn: nc, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = api.Stop() }()
	// The admin API's own catalogue loads first, so that the baseline
	// holds it and the difference is the console's. A listing waits for
	// the catalogue (up to 5 s, then "unavailable": ask again).
	err = testwait.Until(2*time.Minute, fmt.Sprintf("the admin API's catalogue of %d schedules", n), func() error {
		var pg admin.Page[admin.ScheduleInfo]
		err := (apiClient{nc: nc, prefix: "sched.api"}).call(ctx, "", "schedule.list", admin.ListRequest{Limit: 1}, &pg)
		if err == nil && pg.Total != n {
			err = fmt.Errorf("total %d", pg.Total)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	before := liveHeap()
	t0 = time.Now()
	s, err := Start(ctx, Config{Conn: nc, Listen: "127.0.0.1:0", LatenessWindow: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Stop(ctx) }()
	testwait.Done(t, 2*time.Minute, "the console's index", s.index.ready)
	load := time.Since(t0)
	after := liveHeap()
	t.Logf("index of %d schedules loaded in %s (planned next fire computed for each); console heap %.1f MiB (%.0f bytes per schedule)",
		n, load.Round(time.Millisecond), float64(after-before)/(1<<20), float64(after-before)/float64(n))

	for _, path := range []string{"/schedules", "/schedules?q=s0099", "/schedules?workflow=reports&state=planned"} {
		var ttfb []time.Duration
		var body string
		for range 20 {
			d, b := firstByte(t, s.URL()+strings.TrimPrefix(path, "/"))
			ttfb = append(ttfb, d)
			body = b
		}
		slices.Sort(ttfb)
		if !strings.Contains(body, "matching, sorted by next fire") || strings.Count(body, "<tr class=\"st-") == 0 {
			t.Fatalf("%s: not a schedule list:\n%s", path, body)
		}
		t.Logf("GET %s: time to first byte median %s, max %s (%d rows)", path, ttfb[len(ttfb)/2].Round(100*time.Microsecond),
			ttfb[len(ttfb)-1].Round(100*time.Microsecond), strings.Count(body, "<tr class=\"st-"))
	}
	res := s.index.list(listQuery{Limit: 50})
	if res.Total != n || len(res.Rows) != 50 {
		t.Fatalf("the index lists %d of %d rows, want 50 of %d", len(res.Rows), res.Total, n)
	}
}

// writeSpecs writes n daily schedules with spread anchors, straight into
// sched_specs (as `nats kv put` would), a window of publishes at a time.
func writeSpecs(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	ctx := context.Background()
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	var acks []jetstream.PubAckFuture
	for i := range n {
		anchor := start.Add(time.Duration(float64(22*time.Hour) * float64(i) / float64(n)))
		spec := kvstore.Spec{Workflow: []string{"billing", "reports", "sync"}[i%3], Every: "24h", Anchor: &anchor}
		data, err := spec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		a, err := js.PublishAsync(jsname.KV(js, "sched_specs", fmt.Sprintf("s%07d", i)), data)
		if err != nil {
			t.Fatal(err)
		}
		acks = append(acks, a)
		if len(acks) == 4096 || i == n-1 {
			for _, a := range acks {
				select {
				case <-a.Ok():
				case err := <-a.Err():
					t.Fatal(err)
				case <-ctx.Done():
				}
			}
			acks = acks[:0]
		}
	}
}

// liveHeap is the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// firstByte fetches url and returns the time to its first response byte.
func firstByte(t *testing.T, url string) (time.Duration, string) {
	t.Helper()
	var start time.Time
	var first time.Duration
	trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { first = time.Since(start) }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s", url, resp.Status)
	}
	return first, string(b)
}
