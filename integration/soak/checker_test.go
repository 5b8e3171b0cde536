package soak

// The checker: reads SCHED_FIRES from its first message (headers only) and
// keeps, per schedule, every regular slot fired; the extra slots (triggers,
// backfills) by id; and per minute and instance the fires and their
// dispatch lateness.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// fireStream is the stream the checker reads.
const fireStream = "SCHED_FIRES"

// checker is used by one goroutine at a time (the monitor while it runs,
// then the test).
type checker struct {
	reader *faulttest.FireReader
	origin time.Time // minute 0 of the reports

	regular map[string][]int64 // schedule id -> regular slots (unix ms), in stream order
	latest  map[string]int64   // schedule id -> latest regular slot
	extra   map[string]int     // trigger and backfill slot id -> messages
	msgs    int
	reasons map[string]int // Sched-Reason -> messages
	bad     []string       // messages that are not well-formed fires

	minutes map[int]map[string]*minuteStat // minute -> Sched-Instance -> fires
	late    []float64                      // every regular fire's lateness (ms), for the run's percentiles
}

// minuteStat is one instance's fires in one minute (by dispatch time).
type minuteStat struct {
	fires  int
	lateMs []float64 // regular fires only: trigger and backfill slots are not late
}

func newChecker(js jetstream.JetStream, origin time.Time) *checker {
	return &checker{reader: faulttest.NewFireReader(js, fireStream), origin: origin,
		regular: map[string][]int64{}, latest: map[string]int64{}, extra: map[string]int{}, reasons: map[string]int{},
		minutes: map[int]map[string]*minuteStat{}}
}

// sync reads the messages stored since the last sync.
func (c *checker) sync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.reader.Sync(ctx, func(h nats.Header, _ *jetstream.MsgMetadata) { c.add(h) })
}

func (c *checker) add(h nats.Header) {
	c.msgs++
	reason := h.Get(kvstore.HeaderReason)
	c.reasons[reason]++
	slotID, id := h.Get(kvstore.HeaderMsgID), h.Get(kvstore.HeaderScheduleID)
	sid, kind, ms, err := parseSlot(slotID)
	if err != nil || sid != id {
		c.bad = append(c.bad, fmt.Sprintf("msg-id %q schedule %q: %v", slotID, id, err))
		return
	}
	if kind == "" {
		c.regular[id] = append(c.regular[id], ms)
		c.latest[id] = max(c.latest[id], ms)
	} else {
		c.extra[slotID]++
	}
	at, err := time.Parse(time.RFC3339Nano, h.Get(kvstore.HeaderDispatchedAt))
	if err != nil {
		c.bad = append(c.bad, fmt.Sprintf("%s: %s %q: %v", slotID, kvstore.HeaderDispatchedAt, h.Get(kvstore.HeaderDispatchedAt), err))
		return
	}
	minute := int(math.Floor(at.Sub(c.origin).Minutes()))
	byInst := c.minutes[minute]
	if byInst == nil {
		byInst = map[string]*minuteStat{}
		c.minutes[minute] = byInst
	}
	inst := h.Get(kvstore.HeaderInstance)
	st := byInst[inst]
	if st == nil {
		st = &minuteStat{}
		byInst[inst] = st
	}
	st.fires++
	if kind == "" {
		late := float64(at.UnixMicro()-ms*1000) / 1000
		st.lateMs = append(st.lateMs, late)
		c.late = append(c.late, late)
	}
}

// parseSlot splits "<id>.<ms>" (kind "") and "<id>.<kind>-<ms>".
func parseSlot(slotID string) (id, kind string, ms int64, err error) {
	i := strings.LastIndexByte(slotID, '.')
	if i <= 0 {
		return "", "", 0, fmt.Errorf("slot id %q: want <id>.<unix ms> or <id>.<kind>-<unix ms>", slotID)
	}
	id, rest := slotID[:i], slotID[i+1:]
	if j := strings.LastIndexByte(rest, '-'); j >= 0 {
		kind, rest = rest[:j], rest[j+1:]
		if kind != "trigger" && kind != "backfill" {
			return "", "", 0, fmt.Errorf("slot id %q: unknown kind %q", slotID, kind)
		}
	}
	ms, err = strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return "", "", 0, fmt.Errorf("slot id %q: %w", slotID, err)
	}
	return id, kind, ms, nil
}

// percentile of sorted values (ms); 0 when there are none.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// explainFires reads the whole stream again (headers only, on a reader of its
// own) and describes every message of the slot ids given: when it was
// stored and dispatched, by which instance, why, and its other headers.
// A duplicate or a slot fired that the timeline did not allow is then
// told apart (which instance, how late, under which claim) without
// keeping that much for each of millions of fires during the run.
func explainFires(ctx context.Context, js jetstream.JetStream, slotIDs []string) ([]string, error) {
	want := map[string]bool{}
	for _, id := range slotIDs {
		want[id] = true
	}
	r := faulttest.NewFireReader(js, fireStream)
	var out []string
	err := r.Sync(ctx, func(h nats.Header, md *jetstream.MsgMetadata) {
		id := h.Get(kvstore.HeaderMsgID)
		if !want[id] {
			return
		}
		var rest []string
		for k, vs := range h {
			switch k {
			case kvstore.HeaderMsgID, kvstore.HeaderInstance, kvstore.HeaderDispatchedAt, kvstore.HeaderReason:
			default:
				rest = append(rest, k+"="+strings.Join(vs, ","))
			}
		}
		slices.Sort(rest)
		out = append(out, fmt.Sprintf("%s: seq %d stored %s instance %s dispatched %s reason %q; %s", id, md.Sequence.Stream,
			md.Timestamp.UTC().Format("15:04:05.000"), h.Get(kvstore.HeaderInstance), h.Get(kvstore.HeaderDispatchedAt),
			h.Get(kvstore.HeaderReason), strings.Join(rest, " ")))
	})
	return out, err
}
