package adminapi_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/admin"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// listScaleEnv sets how many listed one-shots TestListedOneShotsAtScale
// writes (unset: listScaleDefault, a second in CI; bench/results/LOG.md
// records a run with 1000000).
const listScaleEnv = "JETSCHED_LIST_SCALE"

// listScaleDefault is the test's size without listScaleEnv: a list in
// each of the 64 shards, every item read through its hint (3 s with
// -race).
const listScaleDefault = 5000

// TestListedOneShotsAtScale checks, and with a large N measures, the
// listing pages and gets of many one-shots that fired in windows long
// ago: no state record, no fire left in the stream, an ended list
// standing for each (what a fleet of one-shots looks like after
// --fire-retention). Every item a page or get returns must be ended, from
// its list:
//
//	JETSCHED_LIST_SCALE=1000000 go test -run TestListedOneShotsAtScale -v -timeout 30m ./internal/adminapi/
func TestListedOneShotsAtScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(listScaleEnv))
	if n <= 0 {
		n = listScaleDefault
	}
	a := newAPI(t)
	ctx := context.Background()
	at := time.Now().Add(-48 * time.Hour).UTC().Truncate(time.Second)
	id := func(i int) string { return fmt.Sprintf("once-%07d", i) }
	t0 := time.Now()
	a.bulk(n, id, func(int) kvstore.Spec { return kvstore.Spec{Workflow: "wf", At: &at} })
	t.Logf("%d one-shot specs written in %s", n, time.Since(t0).Round(time.Millisecond))

	shards, err := a.store.Shards(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	byShard := make([][]jsstore.EndedSlot, shards)
	lists := 0
	put := func(shard int) {
		l := jsstore.Ended{Shard: shard, Owner: "s1", At: time.Now().UTC(), Slots: byShard[shard]}
		if _, err := a.store.PutEnded(ctx, l, fmt.Sprintf("t%d", lists)); err != nil {
			t.Fatal(err)
		}
		lists++
		byShard[shard] = byShard[shard][:0]
	}
	for i := range n {
		s := kvstore.ShardOf(id(i), shards)
		byShard[s] = append(byShard[s], jsstore.EndedSlot{Schedule: id(i), Slot: at, Seq: uint64(i + 1), Window: fmt.Sprintf("%d/%d", s, i)})
		if len(byShard[s]) == 512 {
			put(s)
		}
	}
	for s := range byShard {
		if len(byShard[s]) > 0 {
			put(s)
		}
	}
	t.Logf("%d ended lists written in %s", lists, time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	var pg admin.Page[admin.ScheduleInfo]
	err = testwait.Until(5*time.Minute, "the catalogue lists every one-shot as ended", func() error {
		a.ok("schedule.list", admin.ListRequest{Limit: 1, State: admin.StateEnded}, &pg)
		if pg.Total != n {
			return fmt.Errorf("%d ended", pg.Total)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("catalogue of %d schedules and %d lists loaded in %s", n, lists, time.Since(t0).Round(time.Millisecond))

	for _, limit := range []int{100, admin.MaxLimit} {
		var took []time.Duration
		req := admin.ListRequest{Limit: limit}
		for range 5 {
			t0 := time.Now()
			a.ok("schedule.list", req, &pg)
			took = append(took, time.Since(t0))
			if len(pg.Items) == 0 {
				t.Fatalf("schedule.list limit %d: an empty page among %d schedules", limit, n)
			}
			for _, v := range pg.Items {
				if v.State == nil || !v.State.Ended || v.Planned {
					t.Fatalf("%s listed as %+v, want ended from its list", v.ID, v.State)
				}
			}
			req.Cursor = pg.NextCursor
		}
		slices.Sort(took)
		t.Logf("schedule.list limit %d (%d items a page): median %s, max %s", limit, len(pg.Items), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	}
	var took []time.Duration
	for i := range 5 {
		var v admin.ScheduleInfo
		t0 := time.Now()
		a.ok("schedule.get", admin.IDRequest{ID: id(i * n / 5)}, &v)
		took = append(took, time.Since(t0))
		if v.State == nil || !v.State.Ended {
			t.Fatalf("schedule.get %s: %+v, want ended", v.ID, v.State)
		}
	}
	slices.Sort(took)
	t.Logf("schedule.get: median %s, max %s", took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
}
