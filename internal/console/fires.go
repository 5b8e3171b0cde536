package console

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/metrics"
	"github.com/jetsched/jetsched/internal/readmodel"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// slotsPerWindow divides the lateness window into slots that age out one
// at a time.
const slotsPerWindow = 60

// fireFollower reads the headers of the fire stream (an ordered,
// headers-only consumer starting window ago) and keeps a lateness
// histogram of the last window: Sched-Dispatched-At minus
// Sched-Scheduled-At, the figure each scheduler observes into its
// jetsched_fire_lateness_seconds histogram, with the same buckets.
type fireFollower struct {
	js     jetstream.JetStream
	layout kvstore.Layout
	window time.Duration
	log    *slog.Logger
	notify func(string)
	bounds []float64

	mu    sync.Mutex
	slots [slotsPerWindow]latencySlot
	err   string // why the stream cannot be read ("" when it can)

	readmodel.Runner
}

// latencySlot holds the fires dispatched in one slot of the window.
type latencySlot struct {
	start     int64 // the slot's first unix nanosecond
	buckets   []uint64
	workflows map[string]*workflowLateness
}

type workflowLateness struct {
	Count int
	Sum   time.Duration
	Max   time.Duration
}

func newFireFollower(js jetstream.JetStream, layout kvstore.Layout, window time.Duration, log *slog.Logger, notify func(string)) *fireFollower {
	return &fireFollower{js: js, layout: layout, window: window, log: log, notify: notify, bounds: metrics.LatenessBuckets()}
}

func (f *fireFollower) start(ctx context.Context) {
	f.Run(ctx, 10*rewatchDelay, f.follow, func(err error) {
		f.mu.Lock()
		f.err = err.Error()
		f.mu.Unlock()
		f.log.Debug("console: cannot follow the fire stream; retrying", "err", err)
	})
}

func (f *fireFollower) follow(ctx context.Context) error {
	from := time.Now().Add(-f.window)
	cons, err := f.js.OrderedConsumer(ctx, f.layout.FiresStream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &from, HeadersOnly: true,
	})
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.err = ""
	f.mu.Unlock()
	return eachMsg(ctx, f.js.Conn(), cons, func(m jetstream.Msg) {
		meta, err := kvstore.ParseFireMeta(m.Headers())
		if err != nil || meta.DispatchedAt.IsZero() {
			return
		}
		f.observe(meta.Workflow, meta.DispatchedAt, meta.DispatchedAt.Sub(meta.ScheduledAt))
		f.notify(topicFleet)
	})
}

// observe counts one fire dispatched at at, late by late.
func (f *fireFollower) observe(workflow string, at time.Time, late time.Duration) {
	width := int64(f.window / slotsPerWindow)
	start := at.UnixNano() / width * width
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.slots[(start/width)%slotsPerWindow]
	if s.start != start {
		if s.start > start {
			return // older than what the slot holds now
		}
		*s = latencySlot{start: start, buckets: make([]uint64, len(f.bounds)+1), workflows: map[string]*workflowLateness{}}
	}
	sec := late.Seconds()
	i, _ := slices.BinarySearch(f.bounds, sec)
	s.buckets[i]++
	w := s.workflows[workflow]
	if w == nil {
		w = &workflowLateness{}
		s.workflows[workflow] = w
	}
	w.Count++
	w.Sum += late
	w.Max = max(w.Max, late)
}

// latencyView is the histogram of the window ending now.
type latencyView struct {
	Window    time.Duration
	Buckets   []latencyBucket
	Count     uint64
	Workflows []workflowView
	Err       string
}

type latencyBucket struct {
	Label string
	Count uint64
	// Percent is the bar's width: the share of the largest bucket.
	Percent int
}

type workflowView struct {
	Workflow string
	workflowLateness
	Mean time.Duration
}

// view sums the slots of the window ending at now.
func (f *fireFollower) view(now time.Time) latencyView {
	v := latencyView{Window: f.window}
	counts := make([]uint64, len(f.bounds)+1)
	wfs := map[string]*workflowLateness{}
	oldest := now.Add(-f.window).UnixNano()
	f.mu.Lock()
	v.Err = f.err
	for i := range f.slots {
		s := &f.slots[i]
		if s.buckets == nil || s.start < oldest-int64(f.window/slotsPerWindow) {
			continue
		}
		for b, n := range s.buckets {
			counts[b] += n
		}
		for name, w := range s.workflows {
			a := wfs[name]
			if a == nil {
				a = &workflowLateness{}
				wfs[name] = a
			}
			a.Count += w.Count
			a.Sum += w.Sum
			a.Max = max(a.Max, w.Max)
		}
	}
	f.mu.Unlock()
	var top uint64
	for _, n := range counts {
		top = max(top, n)
		v.Count += n
	}
	for i, n := range counts {
		b := latencyBucket{Count: n, Label: "> " + seconds(f.bounds[len(f.bounds)-1])}
		if i < len(f.bounds) {
			b.Label = "≤ " + seconds(f.bounds[i])
		}
		if top > 0 {
			b.Percent = int(n * 100 / top)
		}
		v.Buckets = append(v.Buckets, b)
	}
	for name, w := range wfs {
		wv := workflowView{Workflow: name, workflowLateness: *w}
		if w.Count > 0 {
			wv.Mean = w.Sum / time.Duration(w.Count)
		}
		v.Workflows = append(v.Workflows, wv)
	}
	slices.SortFunc(v.Workflows, func(a, b workflowView) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Workflow, b.Workflow))
	})
	return v
}

// seconds writes a bucket bound: "500µs", "2.5s".
func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).String()
}
