package bench

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// herd makes every schedule due in the same second and measures how long
// the scheduler takes to deliver all of them.
func (r *runner) herd(ctx context.Context) ([]Result, error) {
	n := r.cfg.Herd
	res := Result{Scenario: "herd", Label: fmt.Sprintf("%d due in the same second", n), Count: n, Instances: 1, Peer: herdPeer(n)}
	if n == 0 {
		return nil, nil
	}
	s, in, err := r.startOne(ctx, "herd")
	if err != nil {
		return nil, err
	}
	defer s.close()
	defer in.stop()
	// Leave time to write and index every schedule before the due second
	// (about 150 µs each on a 2-core machine, plus 5 s).
	due := time.Now().Add(5*time.Second + time.Duration(n)*150*time.Microsecond).Truncate(time.Second)
	err = s.putSpecs(ctx, n, "herd", func(i int) (string, kvstore.Spec) {
		return fmt.Sprintf("h%07d", i), kvstore.Spec{Workflow: "herd", At: &due, MisfireThreshold: "1h"}
	})
	if err != nil {
		return nil, err
	}
	rc, err := s.receive(ctx, s.layout.FiresStream, fireSlot, due, due.Add(time.Second))
	if err != nil {
		return nil, err
	}
	defer rc.stop()
	if time.Now().After(due) {
		res.Note = "schedules were still being written when they fell due"
	}
	if err := sleepUntil(ctx, due); err != nil {
		return nil, err
	}
	cpu0 := cpuSeconds()
	r.drain(ctx, rc, &res, "herd: %d/%d fires received", due, due.Add(10*time.Minute))
	if err := s.awaitRecords(ctx, n, due.Add(10*time.Minute)); err != nil {
		res.Note = join(res.Note, err.Error())
		return []Result{res}, nil
	}
	res.RecordedSec = time.Since(due).Seconds()
	res.CPUPer1kRecorded = (cpuSeconds() - cpu0) / float64(n) * 1000
	res.Note = join(res.Note, fmt.Sprintf("state records all written %.1f s after the due second; CPU s/1k until then %.3f", res.RecordedSec, res.CPUPer1kRecorded))
	return []Result{res}, nil
}

// awaitRecords waits until the scenario's state bucket holds n records
// (a herd's one-shots have none until they fire), counting each slot of
// an ended list as one (--ended-lists), or until deadline.
func (s *scenario) awaitRecords(ctx context.Context, n int, deadline time.Time) error {
	kv, err := s.r.js.KeyValue(ctx, s.layout.StateBucket)
	if err != nil {
		return fmt.Errorf("state records: %w", err)
	}
	leases, err := s.r.js.KeyValue(ctx, s.layout.LeasesBucket)
	if err != nil {
		return fmt.Errorf("ended lists: %w", err)
	}
	listed := map[string]int{} // ended list key -> its slots
	for {
		st, err := kv.Status(ctx)
		if err == nil && st.Values()+uint64(countListed(ctx, leases, listed)) >= uint64(n) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("state records: fewer than %d written by the deadline", n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// countListed is how many slots the ended lists in leases name, reading
// only the lists not in seen (key -> slots) yet.
func countListed(ctx context.Context, leases jetstream.KeyValue, seen map[string]int) int {
	keys, err := leases.ListKeysFiltered(ctx, jsstore.EndedPrefix+">")
	if err == nil {
		for k := range keys.Keys() {
			if _, ok := seen[k]; ok {
				continue
			}
			if e, err := leases.Get(ctx, k); err == nil {
				seen[k] = endedSlots(e.Value())
			}
		}
		_ = keys.Stop()
	}
	total := 0
	for _, c := range seen {
		total += c
	}
	return total
}

// endedSlots counts the slots of an ended list's record without decoding
// it: decoding every list (100,000 slots for the herd) cost the bench
// ~0.1 s of CPU, charged to the scheduler's CPU per 1,000 fires. Each
// slot is an object whose first key is "schedule" (kvstore.EndedSlot);
// an id cannot hold a quote.
func endedSlots(record []byte) int {
	return bytes.Count(record, []byte(`{"schedule":`))
}

// join joins two notes.
func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
