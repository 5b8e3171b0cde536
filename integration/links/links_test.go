package links

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/faulttest"
)

// How big and how long every nemesis is: CI's size, a few seconds of
// steady firing, 12s of fault and 6s of recovery.
const (
	fleetSize = 3
	schedules = 20
	faultFor  = 12 * time.Second
	recovery  = 6 * time.Second
	// halfOpenPing is the half-open nemesis' --nats-ping-interval: short
	// enough that the stale connection is noticed within the fault.
	halfOpenPing = 2 * time.Second
)

// nemesis is one kind of bad link.
type nemesis struct {
	name string
	// all puts the toxics on every scheduler's link; otherwise on the
	// link of the one holding the most shards.
	all    bool
	toxics []toxicSpec
	// extra are flags of every scheduler.
	extra []string
	// broken: the link carries nothing. The scheduler behind it must stop
	// its state writes at the lease guard, and notice the dead connection.
	broken bool
}

// toxicSpec is a toxiproxy toxic: its name and its JSON, as
// ToxicCollection.AddToxicJson reads it.
type toxicSpec struct{ name, json string }

// toxic is a toxic of type typ on stream (upstream: scheduler to server),
// with attrs the JSON fields of its attributes.
func toxic(typ, stream, attrs string) toxicSpec {
	name := typ + "_" + stream
	return toxicSpec{name, fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"attributes":{%s}}`, name, typ, stream, attrs)}
}

// both is a toxic in each direction.
func both(typ, attrs string) []toxicSpec {
	return []toxicSpec{toxic(typ, "upstream", attrs), toxic(typ, "downstream", attrs)}
}

func nemeses() []nemesis {
	return []nemesis{
		// 200ms each way on every link: every round trip 400ms longer.
		{name: "latency-200ms", all: true, toxics: both("latency", `"latency":200`)},
		// 100ms each way, give or take up to 50ms per chunk.
		{name: "jitter-50ms", all: true, toxics: both("latency", `"latency":100,"jitter":50`)},
		// 1 KB/s each way on the busiest scheduler's link: far less than
		// its watches carry, so its lease renewals fall behind.
		{name: "bandwidth-1kbps", toxics: both("bandwidth", `"rate":1`)},
		// The connection stays open and carries nothing (nor does a new one).
		{name: "half-open", toxics: both("timeout", `"timeout":0`), broken: true,
			extra: []string{"--nats-ping-interval", halfOpenPing.String()}},
		// The busiest scheduler's connections reset 3s after the server
		// first sends on them, reconnections included. toxiproxy's
		// reset_peer holds back what it got while it waits, so no
		// connection gets through its handshake: the link is broken, and
		// every few seconds the scheduler sees a reset and dials again.
		{name: "reset-every-3s", toxics: []toxicSpec{toxic("reset_peer", "downstream", `"timeout":3000`)}, broken: true},
	}
}

// TestLinks runs every nemesis on a fleet of its own, two at a time (the
// default -parallel on two cores).
func TestLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: scheduler fleets behind toxic proxies (./test.sh and CI run it)")
	}
	bin := buildScheduler(t)
	for _, n := range nemeses() {
		t.Run(n.name, func(t *testing.T) {
			t.Parallel()
			run(t, bin, n)
		})
	}
}

func run(t *testing.T, bin string, n nemesis) {
	f := startFleet(t, bin, fleetSize, n.extra...)
	ids := f.register(schedules)
	if err := f.waitSteady(ids, time.Now().Add(time.Second), 60*time.Second); err != nil {
		t.Fatal(err)
	}
	victims := f.members
	heaviest, shards := f.mostShards()
	if !n.all {
		victims = []*member{heaviest}
	}
	offsets := map[*member]int64{}
	for _, m := range victims {
		offsets[m] = faulttest.LogSize(m.proc.LogPath)
	}
	w := window{start: time.Now()}
	for _, m := range victims {
		for _, tx := range n.toxics {
			if _, err := m.proxy.Toxics.AddToxicJson(strings.NewReader(tx.json)); err != nil {
				t.Fatal(errToxic(m.name, tx.json, err))
			}
		}
	}
	w.heal = w.start.Add(faultFor)
	w.end = w.heal.Add(recovery)
	var jsons []string
	for _, tx := range n.toxics {
		jsons = append(jsons, tx.json)
	}
	t.Logf("%s: toxics on %s (%s held %d shards): %s", n.name, names(victims), heaviest.name, shards, strings.Join(jsons, " "))

	// While the fault lasts: when the single victim's shards have all
	// moved, and when it noticed its connection was dead.
	takeover, noticed := time.Duration(-1), time.Duration(-1)
	for time.Now().Before(w.heal) {
		if len(victims) == 1 && takeover < 0 && f.shards()[victims[0].name] == 0 {
			takeover = time.Since(w.start)
		}
		if noticed < 0 && faulttest.LogHas(victims[0].proc.LogPath, offsets[victims[0]], "disconnected from NATS") {
			noticed = time.Since(w.start)
		}
		_ = f.fires.sync() // read as the fault goes on; a failed read is retried
		time.Sleep(min(250*time.Millisecond, time.Until(w.heal)))
	}
	reconnects := 0
	// The heal stops the victims' proxies and sends their taps straight to
	// the server: the schedulers reconnect once, over a clean link.
	// Changing or removing a toxic under traffic is racy in toxiproxy
	// v2.5.0 (UpdateToxicJson decodes into the toxic its links are
	// reading; RemoveToxic could wedge a link for good).
	for _, m := range victims {
		reconnects += logCount(m.proc.LogPath, offsets[m], "reconnected to NATS")
		m.proxy.Stop()
		m.tap.redirect(f.server)
	}
	healed := time.Now()

	// Every scheduler is back in the fleet, holding a shard, and every
	// slot of the window fires.
	time.Sleep(time.Until(w.end)) // the recovery runs its course
	if err := f.waitSteady(ids, time.Now(), 45*time.Second); err != nil {
		t.Errorf("%s: the fleet did not come back together after the heal: %v", n.name, err)
	}
	if miss := f.fires.waitFired(ids, w.start, w.end, 45*time.Second); len(miss) > 0 {
		t.Errorf("%s: %d slots of the window never fired, e.g. %v", n.name, len(miss), miss[:min(5, len(miss))])
	}
	fig := f.fires.account(ids, w)
	extra := []string{fmt.Sprintf("hit=%s", names(victims)), fmt.Sprintf("reconnects=%d", reconnects)}
	if len(victims) == 1 {
		extra = append(extra, fmt.Sprintf("shards=%d takeover=%s", shards, ms(takeover)))
		lastWrite, lastFire, late := victims[0].tap.attempts(w.start, healed, guardLimit)
		extra = append(extra, fmt.Sprintf("last_state_write=%s last_fire=%s (guard %s)", ms(lastWrite), ms(lastFire), ms(guardLimit)))
		if n.broken && late > 0 {
			t.Errorf("%s: %s sent %d state writes later than %s after its link broke (the last %s after): the lease guard did not hold",
				n.name, victims[0].name, late, guardLimit, ms(lastWrite))
		}
	}
	if n.broken {
		extra = append(extra, fmt.Sprintf("noticed=%s", ms(noticed)))
		if noticed < 0 {
			t.Errorf("%s: %s did not log its connection as lost within the %s fault (--nats-ping-interval %s)",
				n.name, victims[0].name, faultFor, halfOpenPing)
		}
	}
	faulttest.Summarize(t, fig.line(n.name, extra...))
	if fig.Duplicates != 0 {
		t.Errorf("%s: %d duplicate fires, e.g. %v", n.name, fig.Duplicates, fig.dups[:min(10, len(fig.dups))])
	}
	if fig.Lost != 0 {
		t.Errorf("%s: %d lost slots, e.g. %v", n.name, fig.Lost, fig.lost[:min(10, len(fig.lost))])
	}
	if len(f.fires.bad) != 0 {
		t.Errorf("%s: %d malformed fire messages, e.g. %v", n.name, len(f.fires.bad), f.fires.bad[:min(5, len(f.fires.bad))])
	}
	for _, m := range f.members {
		if !m.proc.Running() {
			t.Errorf("scheduler %s exited (%s)", m.name, m.proc.ExitStatus())
		}
	}
}

// names lists the members' names.
func names(ms []*member) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.name)
	}
	return strings.Join(out, ",")
}
