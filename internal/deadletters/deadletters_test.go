package deadletters_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/jetsched/jetsched/internal/deadletters"
	"github.com/jetsched/jetsched/internal/natstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// publish puts a dead letter of schedule id of workflow wf into the event
// stream, as pkg/worker does, and returns its sequence.
func publish(t *testing.T, js jetstream.JetStream, wf, id string) uint64 {
	t.Helper()
	m := nats.NewMsg("sched.event.dead_letter." + wf + "." + id)
	m.Header.Set("Sched-Schedule-Id", id)
	m.Header.Set("Sched-Scheduled-At", "2026-12-01T09:00:00Z")
	m.Header.Set(deadletters.HeaderOriginalSubject, "sched.fire."+wf+"."+id)
	m.Header.Set(deadletters.HeaderOriginalID, id+".1796115600000")
	m.Header.Set(deadletters.HeaderDeliveries, "5")
	m.Header.Set(deadletters.HeaderError, "boom "+id)
	ack, err := js.PublishMsg(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// TestListPages: List pages newest first; following next_cursor visits
// every dead letter once, in descending sequence, each page at most limit
// long with the total of all that match on every page, the last page
// without a cursor. A workflow filter keeps its own; other events are
// never listed; more dead letters than one read fetches (256) page alike.
func TestListPages(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	js, store := srv.Store(t)
	d := deadletters.Letters{Store: store}
	ctx := context.Background()

	empty, err := d.List(ctx, "", 0, 10)
	if err != nil || empty.Total != 0 || len(empty.Items) != 0 || empty.NextCursor != "" {
		t.Fatalf("no dead letters: %+v, %v", empty, err)
	}

	var all, billing []uint64 // in publish order
	for i := range 300 {
		wf := "billing"
		if i%3 == 0 {
			wf = "payroll"
		}
		seq := publish(t, js, wf, fmt.Sprintf("s%d", i))
		all = append(all, seq)
		if wf == "billing" {
			billing = append(billing, seq)
		}
		if i == 150 { // another event in between is no dead letter
			if _, err := js.Publish(ctx, "sched.event.missed.s1", []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		workflow string
		limit    int
		want     []uint64
	}{
		{"", 7, all}, {"", 300, all}, {"", 1000, all}, {"billing", 64, billing}, {"payroll", 1, all[:0:0]}, {"nobody", 5, nil},
	} {
		want := c.want
		if c.workflow == "payroll" {
			for i, s := range all {
				if i%3 == 0 {
					want = append(want, s)
				}
			}
		}
		var got []uint64
		before, pages := uint64(0), 0
		for {
			pg, err := d.List(ctx, c.workflow, before, c.limit)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if pg.Total != len(want) || len(pg.Items) > c.limit {
				t.Fatalf("%q limit %d page %d: total %d, %d items; want total %d, at most %d", c.workflow, c.limit, pages, pg.Total, len(pg.Items), len(want), c.limit)
			}
			for _, l := range pg.Items {
				if c.workflow != "" && l.Workflow != c.workflow || l.Kind != deadletters.KindFire || l.Deliveries != 5 {
					t.Fatalf("%q: listed %+v", c.workflow, l)
				}
				got = append(got, l.Seq)
			}
			if pg.NextCursor == "" {
				break
			}
			if before, err = strconv.ParseUint(pg.NextCursor, 10, 64); err != nil || before != pg.Items[len(pg.Items)-1].Seq {
				t.Fatalf("cursor %q, want the page's last sequence", pg.NextCursor)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%q limit %d: %d listed over %d pages, want %d", c.workflow, c.limit, len(got), pages, len(want))
		}
		for i, s := range got {
			if s != want[len(want)-1-i] {
				t.Fatalf("%q limit %d: item %d is seq %d, want %d (newest first, each once)", c.workflow, c.limit, i, s, want[len(want)-1-i])
			}
		}
		if wantPages := max(1, (len(want)+c.limit-1)/c.limit); pages != wantPages {
			t.Errorf("%q limit %d: %d pages, want %d", c.workflow, c.limit, pages, wantPages)
		}
	}

	// A cursor older than every dead letter gives an empty last page.
	pg, err := d.List(ctx, "", all[0], 10)
	if err != nil || len(pg.Items) != 0 || pg.NextCursor != "" || pg.Total != len(all) {
		t.Fatalf("before the first: %+v, %v", pg, err)
	}
}
