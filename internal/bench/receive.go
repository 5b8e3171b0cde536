package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/wakeups"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// receiver is the measuring worker: an ordered consumer on a fire or wakeup
// stream that records, per message, its slot and its lateness (receipt
// minus scheduled time), and counts slots received twice.
type receiver struct {
	cc jetstream.ConsumeContext

	mu    sync.Mutex
	slots map[string]time.Time // slot id -> scheduled time
	// worst is the greatest lateness of the slots scheduled in each
	// whole second of [from, to), by its offset from from, and lateBySec
	// their lateness (each second's p99; all of them, the row's
	// percentiles).
	worst     []time.Duration
	lateBySec [][]time.Duration
	// after is the same for each whole second of [to, end): the seconds
	// after a contended row's co-tenant stopped (receiveAfter), and
	// afterLate their slots' lateness (for each second's p99); inAfter
	// counts their slots.
	after     []time.Duration
	afterLate [][]time.Duration
	end       time.Time
	inAfter   int
	from      time.Time
	to        time.Time
	inWin     int
	dups      int
	bad       int
	first     time.Time
	last      time.Time
	n         int
	tick      chan struct{}
}

// slotOf reads a message's slot id and scheduled time.
type slotOf func(jetstream.Msg) (string, time.Time, error)

func fireSlot(m jetstream.Msg) (string, time.Time, error) {
	meta, err := kvstore.ParseFireMeta(m.Headers())
	return meta.SlotID, meta.ScheduledAt, err
}

func wakeupSlot(m jetstream.Msg) (string, time.Time, error) {
	meta, err := wakeups.ParseMeta(m.Headers())
	return meta.ID, meta.DueAt, err
}

// receive consumes stream from its start. Lateness is kept for slots
// scheduled in [from, to); every slot counts for duplicates.
func (s *scenario) receive(ctx context.Context, stream string, parse slotOf, from, to time.Time) (*receiver, error) {
	return s.r.receive(ctx, stream, nil, parse, from, to)
}

// receive consumes stream (only the subjects filter, when given) from its
// start, as scenario.receive.
func (r *runner) receive(ctx context.Context, stream string, filter []string, parse slotOf, from, to time.Time) (*receiver, error) {
	return r.receiveAfter(ctx, stream, filter, parse, from, to, 0)
}

// receiveAfter is receive that also keeps the worst lateness by second of
// the slots scheduled in the after seconds from to (receiver.after).
func (r *runner) receiveAfter(ctx context.Context, stream string, filter []string, parse slotOf, from, to time.Time, after time.Duration) (*receiver, error) {
	cons, err := r.js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: filter})
	if err != nil {
		return nil, fmt.Errorf("consumer on %s: %w", stream, err)
	}
	rc := &receiver{slots: map[string]time.Time{}, from: from, to: to, end: to.Add(after), tick: make(chan struct{}, 1)}
	rc.worst = make([]time.Duration, wholeSeconds(to.Sub(from)))
	rc.lateBySec = make([][]time.Duration, len(rc.worst))
	rc.after = make([]time.Duration, wholeSeconds(after))
	rc.afterLate = make([][]time.Duration, len(rc.after))
	rc.cc, err = cons.Consume(func(m jetstream.Msg) {
		now := time.Now()
		id, at, err := parse(m)
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if err != nil {
			rc.bad++
			return
		}
		if _, dup := rc.slots[id]; dup {
			rc.dups++
			return
		}
		rc.slots[id] = at
		rc.n++
		if rc.first.IsZero() {
			rc.first = now
		}
		rc.last = now
		if !at.Before(rc.from) && at.Before(rc.to) {
			rc.inWin++
			late := now.Sub(at)
			if sec := int(at.Sub(rc.from) / time.Second); sec < len(rc.worst) {
				rc.worst[sec] = max(rc.worst[sec], late)
				rc.lateBySec[sec] = append(rc.lateBySec[sec], late)
			}
		} else if !at.Before(rc.to) && at.Before(rc.end) {
			rc.inAfter++
			if sec := int(at.Sub(rc.to) / time.Second); sec < len(rc.after) {
				rc.after[sec] = max(rc.after[sec], now.Sub(at))
				rc.afterLate[sec] = append(rc.afterLate[sec], now.Sub(at))
			}
		}
		select {
		case rc.tick <- struct{}{}:
		default:
		}
	}, jetstream.PullMaxMessages(4096))
	if err != nil {
		return nil, fmt.Errorf("consume %s: %w", stream, err)
	}
	return rc, nil
}

func (rc *receiver) stop() { rc.cc.Stop() }

// wholeSeconds is d in seconds, a part second counting as one.
func wholeSeconds(d time.Duration) int { return int((d + time.Second - 1) / time.Second) }

// waitFor waits until cond holds (checked on every message and every
// 100 ms) or the deadline passes; it reports whether cond held.
func (rc *receiver) waitFor(ctx context.Context, deadline time.Time, cond func(rc *receiver) bool, show func(rc *receiver)) bool {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		rc.mu.Lock()
		ok := cond(rc)
		if show != nil {
			show(rc)
		}
		rc.mu.Unlock()
		if ok {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		case <-rc.tick:
		}
	}
}

// latency fills a result's lateness percentiles from the in-window slots.
func (rc *receiver) latency(res *Result) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	res.P50Ms, res.P99Ms, res.MaxMs = percentiles(slices.Concat(rc.lateBySec...))
	res.Duplicates = rc.dups
	if len(rc.worst) > 1 {
		res.MaxMsBySecond, res.P99MsBySecond = bySecond(rc.worst, rc.lateBySec)
	}
	if len(rc.after) > 0 {
		res.AfterMsBySecond, res.AfterP99MsBySecond = bySecond(rc.after, rc.afterLate)
		res.BackOnTime = onTimeAgain(res.AfterP99MsBySecond, onTimeMs)
		res.BackOnTimeWorst = onTimeAgain(res.AfterMsBySecond, onTimeMs)
	}
}

// bySecond is each second's worst and p99 lateness in ms, from its worst
// and its slots' lateness (late, by second; nil when none was kept).
func bySecond(worst []time.Duration, late [][]time.Duration) (worstMs, p99Ms []float64) {
	worstMs, p99Ms = make([]float64, len(worst)), make([]float64, len(worst))
	for i, d := range worst {
		worstMs[i] = ms(d)
		if i < len(late) {
			_, p99Ms[i], _ = percentiles(late[i])
		}
	}
	return worstMs, p99Ms
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentiles(d []time.Duration) (p50, p99, maxv float64) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return ms(s[len(s)/2]), ms(s[(len(s)*99)/100]), ms(s[len(s)-1])
}

// drain waits until res.Count slots are received (or the deadline), then
// fills res: gaps, the time from start to the last receipt, the rate over
// it, CPU per 1,000 and the lateness percentiles. show is a progress
// format taking the received and wanted counts.
func (r *runner) drain(ctx context.Context, rc *receiver, res *Result, show string, start, deadline time.Time) {
	n := res.Count
	cpu0 := cpuSeconds()
	ok := rc.waitFor(ctx, deadline, func(rc *receiver) bool { return rc.n >= n }, func(rc *receiver) {
		r.progress(show, rc.n, n)
	})
	cpu := cpuSeconds() - cpu0
	r.progressDone()
	rc.mu.Lock()
	last, got := rc.last, rc.n
	rc.mu.Unlock()
	if !ok {
		res.Note = fmt.Sprintf("only %d of %d received", got, n)
	}
	res.Gaps = n - got
	if got > 0 {
		res.CPUPer1k = cpu / float64(got) * 1000
	}
	res.Seconds = last.Sub(start).Seconds()
	if res.Seconds > 0 {
		res.PerSec = float64(got) / res.Seconds
	}
	rc.latency(res)
}
