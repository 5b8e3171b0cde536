package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/jetsched/jetsched/internal/auditlog"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/pkg/audit"
)

// TestIntendAllAmidOtherWriters: runs of pipelined entries appended
// while other writers append one at a time make one chain that verifies,
// with every entry of every run in it once and in its run's order.
func TestIntendAllAmidOtherWriters(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	_, js := srv.Connect(t)
	ctx := context.Background()
	if err := auditlog.Setup(ctx, js, audit.Trail{}, 1); err != nil {
		t.Fatal(err)
	}
	const runs, perRun, singles = 4, 300, 60
	var wg sync.WaitGroup
	batch := auditlog.New(js, key, "importer")
	wg.Go(func() {
		for r := range runs {
			ins := make([]jsstore.Intent, perRun)
			for i := range ins {
				id := fmt.Sprintf("r%d-%03d", r, i)
				ins[i] = jsstore.Intent{Action: "schedule.put", Target: id, Detail: map[string]int{"i": i}, Bucket: "sched_specs", Key: id}
			}
			if seqs, err := batch.IntendAll(ctx, ins); err != nil || len(seqs) != perRun {
				t.Errorf("run %d: %d of %d appended: %v", r, len(seqs), perRun, err)
				return
			}
		}
	})
	for w := range 2 {
		l := auditlog.New(js, key, fmt.Sprintf("writer-%d", w))
		wg.Go(func() {
			for i := range singles / 2 {
				if err := l.Record(ctx, "schedule.pause", fmt.Sprintf("w%d-%d", w, i), nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	r, err := audit.Verify(ctx, js, key, audit.VerifyOptions{From: 1})
	if err != nil || !r.Intact() {
		t.Fatalf("verify: %+v %v", r, err)
	}
	s, err := js.Stream(ctx, audit.Stream)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	last := map[int]int{} // per run, the index of its last entry seen
	for seq := uint64(1); seq <= r.To; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		var e audit.Entry
		if err := json.Unmarshal(m.Data, &e); err != nil {
			t.Fatal(err)
		}
		if e.Action != "schedule.put" {
			continue
		}
		seen[e.Target]++
		var run, i int
		if _, err := fmt.Sscanf(e.Target, "r%d-%d", &run, &i); err != nil {
			t.Fatalf("entry %d: target %q", seq, e.Target)
		}
		if prev, ok := last[run]; ok && i <= prev {
			t.Fatalf("entry %d: %s after item %d of its run", seq, e.Target, prev)
		}
		last[run] = i
	}
	if len(seen) != runs*perRun {
		t.Fatalf("%d distinct run entries, want %d", len(seen), runs*perRun)
	}
	for target, n := range seen {
		if n != 1 {
			t.Fatalf("%s appended %d times", target, n)
		}
	}
}
