package daemon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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
	full := time.Now()
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
	setStream(t, r.js, "SCHED_FIRES", func(c *jetstream.StreamConfig) { c.MaxMsgs, c.Discard = -1, jetstream.DiscardOld })
	r.recovered("stream-full", "full", kvstore.EventStreamFull, time.Now(), fmt.Sprintf("refused=%.0f held=%s",
		r.metric("jetsched_publish_errors_total", `stream="fires"`, `reason="stream_full"`), time.Since(full).Round(100*time.Millisecond)))
}
