package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// lastFires is LastFires' answer for ids, by index.
func lastFires(t *testing.T, s *kvstore.Store, ids []string) ([]kvstore.Fired, []error) {
	t.Helper()
	fs, errs := make([]kvstore.Fired, len(ids)), make([]error, len(ids))
	calls := make([]int, len(ids))
	s.LastFires(context.Background(), ids, func(i int, f kvstore.Fired, err error) {
		fs[i], errs[i] = f, err
		calls[i]++
	})
	for i, n := range calls {
		if n != 1 {
			t.Fatalf("LastFires called back %d times for %s (index %d), want once", n, ids[i], i)
		}
	}
	return fs, errs
}

// TestLastFiresTogether: the last fires of many schedules read in
// batches of direct gets answer as LastFired does for each: the highest
// sequence over all of a schedule's workflows, not found for a schedule
// that never fired, invalid for a message on its subject that is not its
// fire, an earlier fire never for a later one.
func TestLastFiresTogether(t *testing.T) {
	t.Parallel()
	js, s := natstest.Start(t).Store(t)
	base := time.UnixMilli(1_800_000_000_000).UTC()
	const n = 600 // three batches
	ids := make([]string, n)
	want := make([]uint64, n) // 0: none
	for i := range ids {
		ids[i] = fmt.Sprintf("s%04d", i)
	}
	for i, id := range ids {
		if i%7 == 0 {
			continue // never fired
		}
		for k := range 1 + i%3 {
			want[i] = natstest.PublishFire(t, js, natstest.Fire{Schedule: id, Workflow: "wf", At: base.Add(time.Duration(k) * time.Second)})
		}
		if i%10 == 1 {
			// Its workflow changed: the later fire is on another subject.
			want[i] = natstest.PublishFire(t, js, natstest.Fire{Schedule: id, Workflow: "other", At: base.Add(time.Minute)})
		}
	}
	// A message on s0003's subject that is not its fire (no slot id).
	m := nats.NewMsg("sched.fire.wf.s0003")
	m.Header.Set(kvstore.HeaderScheduleID, "s0003")
	if _, err := js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	fs, errs := lastFires(t, s, ids)
	for i, id := range ids {
		switch {
		case id == "s0003":
			if !errors.Is(errs[i], kvstore.ErrInvalid) {
				t.Errorf("%s: %+v, %v; want invalid (its last message is not a fire)", id, fs[i], errs[i])
			}
		case want[i] == 0:
			if !errors.Is(errs[i], kvstore.ErrNotFound) {
				t.Errorf("%s: %+v, %v; want not found", id, fs[i], errs[i])
			}
		case errs[i] != nil || fs[i].Seq != want[i] || fs[i].Schedule != id:
			t.Errorf("%s: %+v, %v; want seq %d", id, fs[i], errs[i], want[i])
		}
		if one, err := s.LastFired(context.Background(), id); one != fs[i] || (err == nil) != (errs[i] == nil) {
			t.Errorf("%s: LastFired %+v, %v; LastFires %+v, %v", id, one, err, fs[i], errs[i])
		}
	}
	if len(fs) == 0 {
		t.Fatal("nothing asked")
	}
}

// A schedule whose fires are on more subjects than one direct get
// answers for (1,030 workflows) is read alone, and the schedules asked
// with it are still answered from their batch.
func TestLastFiresOfManySubjects(t *testing.T) {
	t.Parallel()
	js, s := natstest.Start(t).Store(t)
	base := time.UnixMilli(1_800_000_000_000).UTC()
	var last uint64
	for k := range 1030 {
		last = natstest.PublishFire(t, js, natstest.Fire{Schedule: "wide", Workflow: fmt.Sprintf("w%04d", k), At: base.Add(time.Duration(k) * time.Second)})
	}
	narrow := natstest.PublishFire(t, js, natstest.Fire{Schedule: "narrow", Workflow: "wf", At: base})
	fs, errs := lastFires(t, s, []string{"narrow", "wide", "none"})
	if errs[0] != nil || fs[0].Seq != narrow {
		t.Errorf("narrow: %+v, %v; want seq %d", fs[0], errs[0], narrow)
	}
	if errs[1] != nil || fs[1].Seq != last || fs[1].Workflow != "w1029" {
		t.Errorf("wide: %+v, %v; want seq %d on w1029", fs[1], errs[1], last)
	}
	if !errors.Is(errs[2], kvstore.ErrNotFound) {
		t.Errorf("none: %+v, %v; want not found", fs[2], errs[2])
	}
}

// A fire stream without direct gets (an instance of the previous release
// updated it to its own configuration at its start, after this store
// opened it with them on) is read through the JetStream API, one
// schedule at a time, and with direct gets on again by direct gets.
func TestLastFiresWithoutDirectGets(t *testing.T) {
	t.Parallel()
	js, s := natstest.Start(t).Store(t)
	ctx := context.Background()
	base := time.UnixMilli(1_800_000_000_000).UTC()
	want := natstest.PublishFire(t, js, natstest.Fire{Schedule: "a", Workflow: "wf", At: base})
	if f, err := s.LastFired(ctx, "a"); err != nil || f.Seq != want {
		t.Fatalf("with direct gets: %+v, %v; want seq %d", f, err, want)
	}
	setDirect := func(on bool) {
		t.Helper()
		st, err := js.Stream(ctx, "SCHED_FIRES")
		if err != nil {
			t.Fatal(err)
		}
		cfg := st.CachedInfo().Config
		cfg.AllowDirect = on
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	setDirect(false)
	fs, errs := lastFires(t, s, []string{"a", "b"})
	if errs[0] != nil || fs[0].Seq != want || !errors.Is(errs[1], kvstore.ErrNotFound) {
		t.Fatalf("direct gets turned off: %+v, %v / %+v, %v; want seq %d, then not found", fs[0], errs[0], fs[1], errs[1], want)
	}
	setDirect(true)
	if f, err := s.LastFired(ctx, "a"); err != nil || f.Seq != want {
		t.Fatalf("direct gets on again: %+v, %v; want seq %d", f, err, want)
	}
	// The configuration Setup writes has them on.
	st, err := js.Stream(ctx, "SCHED_FIRES")
	if err != nil {
		t.Fatal(err)
	}
	if !st.CachedInfo().Config.AllowDirect {
		t.Error("the fire stream Setup made has no direct gets")
	}
}
