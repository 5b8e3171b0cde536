package daemon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// episodeWarning is the warning a scheduler logs once per episode.
const episodeWarning = "stream does not take publishes"

// TestStreamFull: SCHED_FIRES at its max_msgs with discard new refuses
// every fire (10077 "maximum messages exceeded"). The scheduler retries
// (nothing recorded as failed), says so once (an event, a warning) and
// in its metrics while it lasts; once the limit is raised the schedule
// resumes and, with fire_all, every slot held back fires, each once.
func TestStreamFull(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	r := startRig(t, srv.URL(), natsconn.Options{})
	room := streamMsgs(t, r.js, "SCHED_FIRES") + 2
	setStream(t, r.js, "SCHED_FIRES", func(c *jetstream.StreamConfig) {
		c.MaxMsgs, c.Discard = int64(room), jetstream.DiscardNew
	})
	r.put("full", kvstore.Spec{Workflow: "wf", Every: "1s", Misfire: kvstore.MisfireFireAll})

	ev := r.waitEvent(kvstore.EventStreamFull, 15*time.Second)
	if ev.Stream != "SCHED_FIRES" || ev.Instance != r.d.Engine().Instance() || ev.SlotID == "" {
		t.Errorf("stream_full event %+v: want the stream, this instance and the slot held back", ev)
	}
	testwait.Eventually(t, 5*time.Second, "jetsched_publish_blocked{reason=stream_full} at 1", func() bool {
		return r.metric("jetsched_publish_blocked", `stream="fires"`, `reason="stream_full"`) == 1
	})
	// Held back for more than a claim: the refused slot is given up at
	// its claim's deadline and taken over, and more slots come due.
	testwait.Eventually(t, 15*time.Second, "refusals over two claims", func() bool {
		return r.metric("jetsched_publish_errors_total", `stream="fires"`, `reason="stream_full"`) >= 20 && len(r.eventsOf(kvstore.EventStreamFull)) == 1
	})
	full := time.Now()

	setStream(t, r.js, "SCHED_FIRES", func(c *jetstream.StreamConfig) { c.MaxMsgs, c.Discard = -1, jetstream.DiscardOld })
	testwait.Eventually(t, 15*time.Second, "the slots held back fired", func() bool {
		_, _, _, last := r.slots("full", time.Second)
		return last.After(full.Add(time.Second))
	})
	testwait.Eventually(t, 5*time.Second, "jetsched_publish_blocked back at 0", func() bool {
		return r.metric("jetsched_publish_blocked", `stream="fires"`, `reason="stream_full"`) == 0
	})
	fired, dup, lost, _ := r.slots("full", time.Second)
	events, warns := len(r.eventsOf(kvstore.EventStreamFull)), r.warns(episodeWarning)
	faulttest.Summarize(t, summary("stream-full", fired, dup, lost, fmt.Sprintf("events=%d warns=%d refused=%.0f",
		events, warns, r.metric("jetsched_publish_errors_total", `stream="fires"`, `reason="stream_full"`))))
	if dup != 0 || lost != 0 {
		t.Errorf("%d duplicates, %d lost slots among %d fires", dup, lost, fired)
	}
	if events != 1 || warns != 1 {
		t.Errorf("%d stream_full events and %d warnings for one episode; want one each", events, warns)
	}
	if n := len(r.eventsOf(kvstore.EventFailed)); n != 0 {
		t.Errorf("%d failed events: a full stream must not fail slots", n)
	}
	if got := r.metric("jetsched_events_total", `source="schedules"`, `kind="stream_full"`); got != 1 {
		t.Errorf("jetsched_events_total{kind=stream_full} = %v, want 1", got)
	}
}
