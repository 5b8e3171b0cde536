package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/fires"
	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/internal/pipelined"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// The floor rows measure what any scheduler that publishes each fire from
// a client costs at least, in the same round as the server's own @every:
// a plain publisher (no KV, no claims, no engine) that sends the fire
// messages of n schedules every second, spread over the second as the
// steady scenario's, in the run's fire quanta (each quantum's messages
// sent with async publishes, then their acknowledgements awaited), into a
// stream configured as SCHED_FIRES, received and timed by the steady
// rows' receiver. Their CPU per 1,000 fires against @every's is the
// least a client-side scheduler's can be.

// floorWorkflow and floorInstance are what the floor's fires carry in
// Sched-Workflow and Sched-Instance (the steady scenario's workflow and
// first instance).
const (
	floorWorkflow = "steady"
	floorInstance = "bench-1"
)

// floor runs the floor rows alone (when the native scenario, which runs
// each beside its @every row, is not chosen): the steady counts @every
// is measured at.
func (r *runner) floor(ctx context.Context) ([]Result, error) {
	var out []Result
	for _, n := range everyCounts(r.cfg.Steady) {
		res, err := r.floorRun(ctx, n, r.cfg.Duration)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// everyCounts are the steady counts the @every and floor rows measure:
// up to 10,000 (50,000 would only measure the writing).
func everyCounts(steady []int) []int {
	var out []int
	for _, n := range steady {
		if n <= 10_000 {
			out = append(out, n)
		}
	}
	return out
}

// floorRun publishes n schedules' fires every second for a warm-up second
// and d (and, contended, the seconds after the co-tenant), and measures
// the fires of d as the steady scenario does: lateness is receipt minus
// Sched-Scheduled-At, CPU is this process's (server, publisher, receiver).
func (r *runner) floorRun(ctx context.Context, n int, d time.Duration) (Result, error) {
	q := r.cfg.FireQuantum
	res := Result{Scenario: "floor", Count: n, Instances: 1, Peer: steadyPeer(n),
		Label: fmt.Sprintf("%d schedules x 1/s (publish floor: plain publisher, %s)", n, quantaText(q))}
	l, stop, err := r.floorStream(ctx)
	if err != nil {
		return res, err
	}
	defer stop()
	nc, _, err := r.dial("jetsched bench floor")
	if err != nil {
		return res, err
	}
	defer nc.Close()
	pub := pipelined.NewPublisher(nc, 0, 0)
	defer pub.Close()

	// One warm-up second (nothing to index or lease: the connection's
	// reply subscription, the stream's first blocks), then whole seconds.
	start := time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second)
	from := start.Add(time.Second)
	to := from.Add(max(d.Truncate(time.Second), time.Second))
	rc, err := r.receiveContended(ctx, l.FiresStream, nil, fireSlot, from, to)
	if err != nil {
		return res, err
	}
	defer rc.stop()
	defer r.cont.stop()
	f := newFloorSender(pub, l, n, q)
	sctx, cancel := context.WithCancel(ctx)
	var out floorOutcome
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		out = f.run(sctx, start, rc.end)
	}()
	defer wg.Wait() // after cancel, below: the sender is done before its connection closes
	defer cancel()
	r.progress("floor: %d schedules: measuring %s", n, d)
	cpu, err := r.cpuOver(ctx, from, to)
	if err != nil {
		return res, err
	}
	want := n * int(to.Sub(from)/time.Second)
	rc.waitFor(ctx, to.Add(5*time.Second), func(rc *receiver) bool { return rc.inWin >= want }, nil)
	rc.waitAfter(ctx, n)
	cancel()
	wg.Wait()
	r.progressDone()
	rc.mu.Lock()
	got := rc.inWin
	rc.mu.Unlock()
	res.Gaps = max(want-got, 0)
	res.Seconds = to.Sub(from).Seconds()
	res.PerSec = float64(got) / res.Seconds
	if got > 0 {
		res.CPUPer1k = cpu / float64(got) * 1000
	}
	if out.failed > 0 {
		res.Note = fmt.Sprintf("%d publishes failed (first: %v)", out.failed, out.err)
	}
	rc.latency(&res)
	return res, nil
}

// quantaText says how the floor sends: "4ms quanta", or "each at its
// time" without a quantum.
func quantaText(q time.Duration) string {
	if q <= 0 {
		return "each at its time"
	}
	return q.String() + " quanta"
}

// floorStream creates a fire stream of its own, configured as
// jsstore.Setup configures SCHED_FIRES (file storage, limits retention,
// discard old, the duplicate window, the per-schedule history, the
// bench's fire retention), with no bucket beside it; stop deletes it.
func (r *runner) floorStream(ctx context.Context) (kvstore.Layout, func(), error) {
	r.seq++
	l := kvstore.NamedLayout(fmt.Sprintf("bench%dfloor", r.seq))
	_, err := r.js.CreateStream(ctx, jetstream.StreamConfig{
		Name: l.FiresStream, Description: "jetsched bench: the publish floor's fires",
		Subjects: []string{l.FireSubjects()}, MaxAge: time.Hour, Duplicates: jsstore.DefaultDuplicateWindow,
		MaxMsgsPerSubject: jsstore.DefaultFireHistory, Replicas: 1, Storage: jetstream.FileStorage,
		Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld,
	})
	if err != nil {
		return l, nil, fmt.Errorf("create stream %s: %w", l.FiresStream, err)
	}
	return l, func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = r.js.DeleteStream(dctx, l.FiresStream)
	}, nil
}

// floorSender publishes the fires of n schedules every second, the i-th
// due at i/n of each second (as the steady scenario's anchors), each
// quantum's together.
type floorSender struct {
	pub      *pipelined.Publisher
	stream   string
	n        int
	quantum  time.Duration
	ids      []string // schedule ids, as the steady scenario's
	subjects []string // their fire subjects
}

func newFloorSender(pub *pipelined.Publisher, l kvstore.Layout, n int, quantum time.Duration) *floorSender {
	f := &floorSender{pub: pub, stream: l.FiresStream, n: n, quantum: quantum, ids: make([]string, n), subjects: make([]string, n)}
	for i := range n {
		f.ids[i] = fmt.Sprintf("s%07d", i)
		f.subjects[i] = l.FireSubject(floorWorkflow, f.ids[i])
	}
	return f
}

// floorOutcome is how many of a sender's publishes failed, and the first
// error.
type floorOutcome struct {
	failed int
	err    error
}

// slotAt is the time of the k-th slot from start (a whole second): the
// schedule k%n's slot in second k/n.
func (f *floorSender) slotAt(start time.Time, k int) time.Time {
	return start.Add(time.Duration(k/f.n)*time.Second + time.Duration(k%f.n)*time.Second/time.Duration(f.n))
}

// run sends the slots from start (a whole second) until end, each
// quantum's at the end of the quantum (never before a slot's time; a
// late sender sends everything due by now), until ctx ends.
func (f *floorSender) run(ctx context.Context, start, end time.Time) floorOutcome {
	var out floorOutcome
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	acks := pipeline.NewAckTimer()
	defer acks.Stop()
	var futs []jetstream.PubAckFuture
	for k := 0; f.slotAt(start, k).Before(end); {
		due := fires.QuantumEnd(f.slotAt(start, k), f.quantum)
		if wait := time.Until(due); wait > 0 {
			wake.Reset(wait)
			select {
			case <-wake.C:
			case <-ctx.Done():
				return out
			}
		}
		sent, upTo := time.Now(), due
		if sent.After(upTo) {
			upTo = sent
		}
		futs = futs[:0]
		for stop := f.batch(start, k, upTo, end); k < stop; k++ {
			fut, err := f.pub.PublishTo(ctx, f.fire(k%f.n, f.slotAt(start, k)), f.stream)
			if err != nil {
				out.add(ctx, err)
				continue
			}
			futs = append(futs, fut)
		}
		for _, fut := range futs {
			if _, err := acks.Await(fut, sent); err != nil {
				out.add(ctx, err)
			}
		}
		if ctx.Err() != nil {
			return out
		}
	}
	return out
}

// batch is the end of the batch of slots from the k-th: every slot due
// by upTo and before end.
func (f *floorSender) batch(start time.Time, k int, upTo, end time.Time) int {
	for ; ; k++ {
		if at := f.slotAt(start, k); at.After(upTo) || !at.Before(end) {
			return k
		}
	}
}

// add counts a failed publish, unless the run is being stopped.
func (o *floorOutcome) add(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	if o.failed == 0 {
		o.err = err
	}
	o.failed++
}

// fire is schedule i's fire message for its slot at: the subject, the
// headers and the (empty) body of a plain fire of a steady schedule.
func (f *floorSender) fire(i int, at time.Time) *nats.Msg {
	v := [...]string{kvstore.SlotID(f.ids[i], at), f.ids[i], floorWorkflow, at.UTC().Format(time.RFC3339Nano),
		time.Now().UTC().Format(time.RFC3339Nano), floorInstance}
	return &nats.Msg{Subject: f.subjects[i], Header: nats.Header{
		jetstream.MsgIDHeader:      v[0:1:1],
		kvstore.HeaderScheduleID:   v[1:2:2],
		kvstore.HeaderWorkflow:     v[2:3:3],
		kvstore.HeaderScheduledAt:  v[3:4:4],
		kvstore.HeaderDispatchedAt: v[4:5:5],
		kvstore.HeaderInstance:     v[5:6:6],
	}}
}
