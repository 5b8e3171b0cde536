package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers the native scenario puts on its schedule messages; the server
// copies them onto each message it generates (it strips only the
// Nats-Schedule*, Nats-Msg-Id, Nats-TTL and Nats-Rollup headers), so the
// receiver reads each generated message's slot and due time from them.
const (
	nativeSlotHeader = "Bench-Slot"
	nativeAtHeader   = "Bench-At"
)

// native measures the peer jetsched must beat, in the same run: the NATS
// server's own message schedules (ADR-51, `Nats-Schedule: @at <time>`) on
// a file-backed stream of the same server. Rows: a herd (Herd schedules
// due at one instant, drained by a pull consumer), lateness (100 schedules
// a second for the steady duration), and each steady count up to 10,000
// as schedules @every 1s, each followed by the floor row of that count
// (scenario floor: a client's plain publishes, the least a client-side
// scheduler pays, beside @every in the same round). Each schedule is a
// message on its own subject, as the server requires; the target subject
// is in the same stream.
func (r *runner) native(ctx context.Context) ([]Result, error) {
	var out []Result
	if n := r.cfg.Herd; n > 0 {
		res, err := during(r.cont, func() (Result, error) {
			return r.nativeRun(ctx, "herd", n, func(due time.Time, i int) time.Time { return due })
		})
		if err != nil {
			return out, err
		}
		res.Label = fmt.Sprintf("%d due in the same second (NATS server @at)", n)
		res.Peer = herdPeer(n)
		out = append(out, res)
	}
	if d := r.cfg.Duration; d > 0 {
		n := int(d.Seconds() * 100)
		// 100 due at each whole second: @at has whole seconds only.
		res, err := during(r.cont, func() (Result, error) {
			return r.nativeRun(ctx, "steady", n, func(start time.Time, i int) time.Time {
				return start.Add(time.Duration(i/100) * time.Second)
			})
		})
		if err != nil {
			return out, err
		}
		res.Label = fmt.Sprintf("100/s for %s (NATS server @at)", d)
		out = append(out, res)
		// The peer of the steady scenario: its counts, up to 10,000, as
		// schedules @every 1s, each followed by the publish floor at the
		// same count (see floorRun).
		for _, n := range everyCounts(r.cfg.Steady) {
			res, err := r.nativeEvery(ctx, n, d)
			if err != nil {
				return out, err
			}
			out = append(out, res)
			if res, err = r.floorRun(ctx, n, d); err != nil {
				return out, err
			}
			out = append(out, res)
		}
	}
	return out, nil
}

// nativeEvery writes n schedules "@every 1s" and measures, over d after a
// warm-up, what the server generates: lateness is receipt minus the fire's
// due time, which is its Nats-Schedule-Next less the interval.
func (r *runner) nativeEvery(ctx context.Context, n int, d time.Duration) (Result, error) {
	res := Result{Scenario: "native", Count: n * int(d/time.Second), Instances: 1,
		Label: fmt.Sprintf("%d schedules x 1/s (NATS server @every)", n), Peer: steadyPeer(n)}
	name, prefix, stop, err := r.nativeStream(ctx)
	if err != nil {
		return res, err
	}
	defer stop()
	target := prefix + ".fired"
	for i := range n {
		m := nats.NewMsg(prefix + ".sched." + strconv.Itoa(i))
		m.Header.Set("Nats-Schedule", "@every 1s")
		m.Header.Set("Nats-Schedule-Target", target)
		m.Header.Set(nativeSlotHeader, strconv.Itoa(i))
		if err := r.publishAsync(ctx, m); err != nil {
			return res, fmt.Errorf("schedule %d: %w", i, err)
		}
	}
	if err := r.flush(ctx); err != nil {
		return res, err
	}
	from := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(time.Second) // every schedule runs by then
	to := from.Add(d)
	rc, err := r.receiveContended(ctx, name, []string{target}, nativeEverySlot, from, to)
	if err != nil {
		return res, err
	}
	defer rc.stop()
	defer r.cont.stop()
	cpu, err := r.cpuOver(ctx, from, to)
	if err != nil {
		return res, err
	}
	// The fires due before `to` arrive a little later.
	rc.waitFor(ctx, to.Add(5*time.Second), func(rc *receiver) bool { return rc.inWin >= res.Count }, func(*receiver) {})
	rc.mu.Lock()
	got := rc.inWin
	rc.mu.Unlock()
	rc.waitAfter(ctx, n)
	res.Gaps = max(res.Count-got, 0)
	res.Seconds = d.Seconds()
	res.PerSec = float64(got) / d.Seconds()
	if got > 0 {
		res.CPUPer1k = cpu / float64(got) * 1000
	}
	rc.latency(&res)
	return res, nil
}

// receiveContended starts the receiver of a steady rate's row
// (receiveAfter, with the seconds after the co-tenant when the pass is
// contended), then the co-tenant: from now to the end of the measured
// seconds, after which the row goes on to see the rate back on time. The
// caller stops both.
func (r *runner) receiveContended(ctx context.Context, stream string, filter []string, parse slotOf, from, to time.Time) (*receiver, error) {
	rc, err := r.receiveAfter(ctx, stream, filter, parse, from, to, r.afterContention(r.cont))
	if err != nil {
		return nil, err
	}
	if err := r.cont.start(); err != nil {
		rc.stop()
		return nil, err
	}
	return rc, nil
}

// cpuOver waits until to and returns this process's CPU from from to
// to, then stops the co-tenant (the measured seconds are over).
func (r *runner) cpuOver(ctx context.Context, from, to time.Time) (float64, error) {
	if err := sleepUntil(ctx, from); err != nil {
		return 0, err
	}
	cpu0 := cpuSeconds()
	if err := sleepUntil(ctx, to); err != nil {
		return 0, err
	}
	cpu := cpuSeconds() - cpu0
	r.cont.stop()
	return cpu, nil
}

// nativeEverySlot reads an @every fire's slot (schedule and due time).
func nativeEverySlot(m jetstream.Msg) (string, time.Time, error) {
	h := m.Headers()
	next, err := time.Parse(time.RFC3339Nano, h.Get("Nats-Schedule-Next"))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("Nats-Schedule-Next: %w", err)
	}
	due := next.Add(-time.Second)
	return h.Get(nativeSlotHeader) + "." + strconv.FormatInt(due.UnixMilli(), 10), due, nil
}

// nativeRun writes n @at schedules, the i-th due at at(start, i), then
// receives what the server generates.
func (r *runner) nativeRun(ctx context.Context, kind string, n int, at func(time.Time, int) time.Time) (Result, error) {
	res := Result{Scenario: "native", Count: n, Instances: 1}
	name, prefix, stop, err := r.nativeStream(ctx)
	if err != nil {
		return res, err
	}
	defer stop()
	target := prefix + ".fired"
	// Leave time to write every schedule before the first is due (about
	// 100 µs each on a 2-core machine, plus 3 s); @at takes whole seconds.
	start := time.Now().Add(3*time.Second + time.Duration(n)*100*time.Microsecond).Truncate(time.Second).Add(time.Second)
	for i := range n {
		due := at(start, i)
		m := nats.NewMsg(prefix + ".sched." + strconv.Itoa(i))
		m.Header.Set("Nats-Schedule", "@at "+due.UTC().Format(time.RFC3339))
		m.Header.Set("Nats-Schedule-Target", target)
		m.Header.Set(nativeSlotHeader, strconv.Itoa(i))
		m.Header.Set(nativeAtHeader, due.UTC().Format(time.RFC3339Nano))
		if err := r.publishAsync(ctx, m); err != nil {
			return res, fmt.Errorf("schedule %d: %w", i, err)
		}
		if i%10_000 == 0 {
			r.progress("native %s: writing schedules %d/%d", kind, i, n)
		}
	}
	if err := r.flush(ctx); err != nil {
		return res, err
	}
	if time.Now().After(start) {
		res.Note = "schedules were still being written when they fell due"
	}
	end := at(start, n-1).Add(time.Second)
	rc, err := r.receive(ctx, name, []string{target}, nativeSlot, start, end)
	if err != nil {
		return res, err
	}
	defer rc.stop()
	if err := sleepUntil(ctx, start); err != nil {
		return res, err
	}
	r.drain(ctx, rc, &res, "native "+kind+": %d/%d messages received", start, end.Add(5*time.Minute))
	return res, nil
}

// nativeStream creates a stream of its own for message schedules; stop
// deletes it (which ends its schedules).
func (r *runner) nativeStream(ctx context.Context) (name, prefix string, stop func(), err error) {
	r.seq++
	name = fmt.Sprintf("BENCH%dNATIVE", r.seq)
	prefix = fmt.Sprintf("bench%dnative", r.seq)
	_, err = r.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: name, Subjects: []string{prefix + ".>"}, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, AllowMsgSchedules: true,
	})
	if err != nil {
		return "", "", nil, fmt.Errorf("create stream %s with message schedules (needs nats-server 2.12+): %w", name, err)
	}
	return name, prefix, func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = r.js.DeleteStream(dctx, name)
	}, nil
}

// nativeSlot reads a generated message's slot and due time.
func nativeSlot(m jetstream.Msg) (string, time.Time, error) {
	h := m.Headers()
	at, err := time.Parse(time.RFC3339Nano, h.Get(nativeAtHeader))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("%s: %w", nativeAtHeader, err)
	}
	return h.Get(nativeSlotHeader), at, nil
}
