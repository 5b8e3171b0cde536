package partition

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/faulttest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// fireReader keeps every fire of SCHED_FIRES by slot, with the stream's
// timestamp, read in order from the first message (faulttest.FireReader);
// it can move to another connection (the checker follows the majority).
// Used from the test's goroutine only.
type fireReader struct {
	stream *faulttest.FireReader

	fires map[slotKey][]fireRec
	msgs  int
	bad   []string // messages that are not well-formed fires
}

func newFireReader() *fireReader {
	return &fireReader{fires: map[slotKey][]fireRec{}}
}

// use reads through js from now on.
func (f *fireReader) use(js jetstream.JetStream) {
	if f.stream == nil {
		f.stream = faulttest.NewFireReader(js, "SCHED_FIRES")
		return
	}
	f.stream.Use(js)
}

// sync reads every message stored up to now.
func (f *fireReader) sync(ctx context.Context) error {
	return f.stream.Sync(ctx, func(h nats.Header, md *jetstream.MsgMetadata) { f.add(h, md.Timestamp) })
}

func (f *fireReader) add(h nats.Header, stored time.Time) {
	f.msgs++
	slotID, id := h.Get(kvstore.HeaderMsgID), h.Get(kvstore.HeaderScheduleID)
	sid, slot, err := kvstore.ParseSlotID(slotID)
	if err != nil || sid != id {
		f.bad = append(f.bad, fmt.Sprintf("msg-id %q schedule %q: %v", slotID, id, err))
		return
	}
	k := slotKey{id, slot.UnixMilli()}
	f.fires[k] = append(f.fires[k], fireRec{stored: stored, instance: h.Get(kvstore.HeaderInstance), reason: h.Get(kvstore.HeaderReason)})
}

// syncRetry syncs until it succeeds or timeout passes (elections).
func (f *fireReader) syncRetry(timeout time.Duration) error {
	return testwait.Until(timeout, "SCHED_FIRES read", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return f.sync(ctx)
	})
}

// missing lists the slots of scheds in [from, to) with no fire yet.
func (f *fireReader) missing(scheds []schedule, from, to time.Time) []string {
	var out []string
	for _, s := range scheds {
		for _, ms := range s.slots(from, to) {
			if len(f.fires[slotKey{s.id, ms}]) == 0 {
				out = append(out, kvstore.SlotID(s.id, time.UnixMilli(ms)))
			}
		}
	}
	return out
}

// waitFired syncs until every slot of scheds in [from, to) has fired, or
// timeout passes; it returns the slots still missing.
func (f *fireReader) waitFired(scheds []schedule, from, to time.Time, timeout time.Duration) []string {
	var miss []string
	_ = testwait.Until(timeout, "every slot fired", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := f.sync(ctx)
		miss = f.missing(scheds, from, to)
		if err != nil {
			return err
		}
		if len(miss) > 0 {
			return fmt.Errorf("%d slots not fired yet", len(miss))
		}
		return nil
	})
	return miss
}
