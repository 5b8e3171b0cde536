package skew

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testlog"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// leases is a real bucket standing for sched_leases.
func leases(t *testing.T) jetstream.KeyValue {
	t.Helper()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "sched_leases"})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// putMember writes member.<instance> as the fire engine does, renewed at
// the server's now plus skew.
func putMember(t *testing.T, kv jetstream.KeyValue, instance string, skew time.Duration) jetstream.KeyValueEntry {
	t.Helper()
	ctx := context.Background()
	v, _ := json.Marshal(map[string]any{"owner": instance, "renewed": time.Now().Add(skew).UTC(), "ttl": "10s"})
	if _, err := kv.Put(ctx, "member."+instance, v); err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "member."+instance)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestMeasure(t *testing.T) {
	kv := leases(t)
	for _, skew := range []time.Duration{0, 30 * time.Second, -30 * time.Second, 1500 * time.Millisecond} {
		got, err := Measure(putMember(t, kv, "s1", skew))
		if err != nil {
			t.Fatal(err)
		}
		// The server stamps the record after the put left: within 250ms.
		if d := got - skew; d > 0 || d < -250*time.Millisecond {
			t.Errorf("skew %s measured as %s", skew, got)
		}
	}
	ctx := context.Background()
	for _, bad := range []string{`not json`, `{"owner":"s1"}`} {
		if _, err := kv.Put(ctx, "member.bad", []byte(bad)); err != nil {
			t.Fatal(err)
		}
		e, err := kv.Get(ctx, "member.bad")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Measure(e); err == nil {
			t.Errorf("Measure(%q): no error", bad)
		}
	}
}

// TestWatcherWarns: a member record 30s ahead is reported, then a record
// in time again is reported as agreeing.
func TestWatcherWarns(t *testing.T) {
	kv := leases(t)
	putMember(t, kv, "s1", 30*time.Second)
	differs := testlog.NewSignal("clock differs from the NATS server's")
	w, err := New(Config{Leases: kv, Instance: "s1", Interval: 50 * time.Millisecond, Logger: differs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	select {
	case <-differs.Seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no warning for a clock 30s ahead within 10s")
	}
	if got := w.Last(); got < 29*time.Second || got > 30*time.Second {
		t.Errorf("Last() = %s, want about 30s", got)
	}
	w.Stop(context.Background())

	// The same watcher, restarted with a logger for the recovery note.
	agrees := testlog.NewSignal("agrees with the NATS server's again")
	w.log = agrees.Logger()
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	putMember(t, kv, "s1", 0)
	select {
	case <-agrees.Seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no note within 10s that the clock agrees again")
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := New(Config{Instance: "s1"}); err == nil {
		t.Error("no Leases: no error")
	}
	kv := leases(t)
	if _, err := New(Config{Leases: kv}); err == nil {
		t.Error("no Instance: no error")
	}
	w, err := New(Config{Leases: kv, Instance: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop(context.Background()) // before Start: a no-op
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(context.Background()); err != nil {
		t.Errorf("second Start: %v", err)
	}
	w.Stop(context.Background())
	w.Stop(context.Background())
}

// TestWatcherSkipsAPreviousRun: a member record left by a previous process
// under the same instance name (its clock right) is not taken for this
// process's: the watcher waits for its own record (this clock 30s ahead)
// and warns. Measuring the old one, it waited a whole Interval and the
// partition tests' clock-ahead nemesis saw no warning under load.
func TestWatcherSkipsAPreviousRun(t *testing.T) {
	kv := leases(t)
	ctx := context.Background()
	put := func(run string, skew time.Duration) {
		v, _ := json.Marshal(map[string]any{"owner": "s1", "renewed": time.Now().Add(skew).UTC(), "ttl": "10s", "run": run})
		if _, err := kv.Put(ctx, "member.s1", v); err != nil {
			t.Fatal(err)
		}
	}
	put("old", 0)
	// One logger, two signals: the watcher passing over the old record,
	// then its warning on the new one.
	skipped := testlog.NewSignal("member record of a previous process")
	differs := testlog.NewSignal("clock differs from the NATS server's")
	w, err := New(Config{Leases: kv, Instance: "s1", Run: "new", Interval: time.Hour,
		Logger: slog.New(testlog.Multi{skipped, differs})})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())
	select {
	case <-skipped.Seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the watcher did not pass over the previous run's record within 10s")
	}
	put("new", 30*time.Second)
	select {
	case <-differs.Seen:
	case <-time.After(10 * time.Second):
		t.Fatal("no warning within 10s: the previous run's record was measured and the next look is an Interval away")
	}
}
