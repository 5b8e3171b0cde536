package fires

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// Steps of a window claim (JETSCHED_CRASH_AT names them too): before the
// window's CAS, after it, after each of its publishes is sent, after each
// is acknowledged, after all of them, and after the state records and
// ledger entries.
const (
	StepBeforeWindow    Step = "before-window"
	StepAfterWindow     Step = "after-window"
	StepWindowSend      Step = "window-send"
	StepWindowPublish   Step = "window-publish"
	StepWindowPublished Step = "window-published"
	StepWindowRecorded  Step = "window-recorded"
	// StepWindowDeferred: a window's fires are published and acknowledged,
	// and the state records of its one-shots left for later (see
	// deferRecords); a crash here leaves them to the next decision.
	StepWindowDeferred Step = "window-deferred"
	// StepWindowRefused: the server refused a window record for its size;
	// its slots went per slot.
	StepWindowRefused Step = "window-refused"
	// StepWindowCheckFailed: reading a shard's window record failed; the
	// check is retried. StepWindowCheckDeferred: a check came due for a
	// shard not owned (any more, or anew): the schedules waiting for it
	// went back through dispatch.
	StepWindowCheckFailed   Step = "window-check-failed"
	StepWindowCheckDeferred Step = "window-check-deferred"
)

// DefaultWindowSlots is how many slots one window claim covers at most
// unless Config.WindowSlots says otherwise.
const DefaultWindowSlots = 512

// maxWindowBytes bounds a window record, well below any server's payload
// limit; a batch stops growing when it would pass it.
const maxWindowBytes = 256 << 10

// windowSkew is how far a window's slot may lie after the window's own
// time (clock skew between instances) and still be taken for a slot it
// claimed.
const windowSkew = 5 * time.Second

// windowItem is one slot of a window being fired.
type windowItem struct {
	j     *slotJob // in its window job's items
	r     slotResult
	st    kvstore.State
	claim kvstore.Claim
	ack   *jetstream.PubAck
	fut   jetstream.PubAckFuture
	sent  time.Time
	// dispatched is its fire's Sched-Dispatched-At, which the fired
	// event repeats.
	dispatched time.Time
	span       trace.Span // the dispatch span of its first publish
	// fired is how many fires the record is to take in (0: this one):
	// a record left behind (behind.go) is written with all of its
	// unrecorded fires.
	fired uint64
}

// fireWindow claims the due slots of wj with one window CAS, publishes
// them without waiting for each acknowledgement, then writes each
// schedule's state (with the fire's sequence, which settles its claim)
// and ledger entry the same way.
func (w worker) fireWindow(ctx context.Context, wj *fireJob) *fireResult {
	r := w.prepareWindow(ctx, wj)
	if !w.mayClaim(r) {
		return r.out
	}
	rev, err := w.e.store.PutWindow(ctx, r.win, wj.mark.rev)
	if !w.claimed(r, rev, err) {
		return r.out
	}
	w.sendFires(ctx, r.items)
	w.finishWindow(ctx, r)
	return r.out
}

// windowRun is a window being fired: its job, its result so far, its
// record and the slots it claims.
type windowRun struct {
	wj    *fireJob
	out   *fireResult
	win   jsstore.Window
	items []*windowItem
	// claim is its record's asynchronous CAS (fireBundle), sent at
	// sent.
	claim jetstream.PubAckFuture
	sent  time.Time
}

// prepareWindow decides wj's slots: the plain ones become the window's
// items, the others are declined (the per-slot path takes them).
func (w worker) prepareWindow(ctx context.Context, wj *fireJob) *windowRun {
	out := &fireResult{shard: wj.shard, mark: wj.mark}
	now := w.e.cfg.Clock.Now()
	win := jsstore.Window{Shard: wj.shard, Seq: wj.mark.seq + 1, Token: randomID(), Owner: w.e.cfg.Instance,
		At: now.UTC(), Expires: now.Add(w.e.cfg.ClaimTTL).UTC()}
	name := win.Name()
	win.Slots = make([]jsstore.WindowSlot, 0, len(wj.items))
	out.results = make([]slotResult, 0, len(wj.items))
	items := make([]*windowItem, 0, len(wj.items))
	slab := make([]windowItem, 0, len(wj.items)) // one allocation for the window's items
	lags := w.lookUpLags(ctx, wj.items)
	for i := range wj.items {
		j := &wj.items[i]
		r := slotResult{id: j.id, state: j.state, stateRev: j.stateRev, planned: j.planned, settled: j.settled, checked: j.checked}
		if lags[i] || j.planned && j.stateRev > 0 {
			// Behind the stream, or not looked up: the per-slot path
			// writes the catch-up (or tries the lookup again). Or its
			// record was deleted: the per-slot path checks its spec first
			// (specCurrent).
			out.declined = append(out.declined, j.id)
			out.results = append(out.results, r)
			continue
		}
		d, plain := DecidePlain(w.e.decideInput(now, j.id, j.target, j.compiled, j.written, j.state, j.settled, j.checked))
		if !plain {
			out.declined = append(out.declined, j.id)
			out.results = append(out.results, r)
			continue
		}
		c := kvstore.Claim{Slot: utc(d.Slot), Token: win.Token, Owner: win.Owner, At: win.At, Expires: win.Expires, Window: name}
		if prev := j.state; prev.NextReason != "" && d.Slot.Equal(prev.Next) {
			c.Reason, c.Note, c.Nominal = kvstore.ReasonMoved, prev.NextReason, prev.NextNominal
		}
		slab = append(slab, windowItem{j: j, r: r, claim: c})
		it := &slab[len(slab)-1] // the state built in place: it is ~300 bytes
		it.st = w.next(&r, now)
		setNext(&it.st, d)
		it.st.Fires++
		items = append(items, it)
		win.Slots = append(win.Slots, jsstore.WindowSlot{Schedule: j.id, Slot: c.Slot, Reason: c.Reason})
	}
	return &windowRun{wj: wj, out: out, win: win, items: items}
}

// mayClaim reports whether r's window is to be claimed: it has slots and
// its shard is still this instance's (else its result says so).
func (w worker) mayClaim(r *windowRun) bool {
	if len(r.items) == 0 {
		return false
	}
	w.e.step(StepBeforeWindow)
	if !w.e.leases.owns(r.wj.shard) {
		r.out.recheck, r.out.err = true, fmt.Errorf("%w: shard %d", errNotOwned, r.wj.shard)
		r.out.results = append(r.out.results, unchanged(r.items)...)
		return false
	}
	return true
}

// claimed takes the outcome of r's window CAS (the record's new revision,
// or the error) and reports whether its slots are claimed; if not, r's
// result says why.
func (w worker) claimed(r *windowRun, rev uint64, err error) bool {
	out := r.out
	if permanent(err) {
		// The server refuses a record this large (a small max_payload):
		// these slots go per slot, and the loop makes windows smaller.
		w.e.step(StepWindowRefused)
		out.tooLarge, out.err = true, err
		for _, it := range r.items {
			out.declined = append(out.declined, it.j.id)
		}
		out.results = append(out.results, unchanged(r.items)...)
		return false
	}
	if err != nil {
		out.recheck, out.err = true, err
		out.results = append(out.results, unchanged(r.items)...)
		return false
	}
	out.mark = windowMark{rev: rev, seq: r.win.Seq}
	w.e.step(StepAfterWindow)
	for range r.items {
		w.e.cfg.Observer.Claimed(false)
	}
	return true
}

// finishWindow waits for the acknowledgements of r's fires (sent by
// sendFires), then writes the state records not deferred or left behind.
func (w worker) finishWindow(ctx context.Context, r *windowRun) {
	out := r.out
	items := r.items
	if err := w.awaitFires(ctx, items); err != nil {
		// The slots are claimed and perhaps published: the shard is
		// checked again, which turns them into claims on their records.
		out.recheck, out.err = true, err
		out.results = append(out.results, unchanged(items)...)
		return
	}
	w.e.step(StepWindowPublished)
	items, out.deferred = w.deferRecords(items)
	items = w.leaveBehind(items, out)
	if err := w.recordWindow(ctx, items); err != nil {
		out.recheck, out.err = true, err
	}
	w.e.step(StepWindowRecorded)
	if len(out.deferred) > 0 {
		w.e.step(StepWindowDeferred)
	}
	for _, it := range items {
		out.results = append(out.results, it.r)
	}
}

// deferRecords splits a window's published items into those whose state
// records are written now and those whose records may wait behind due
// work (Config.RecordLag): one-shots that had no record. Nothing else is
// waiting on such a record, and any instance that decides the one-shot
// before it is written finds its fire: a slot late by less than the
// duplicate window (less a claim) only goes through windows, whose
// publish the stream drops as a duplicate, and a later one takes the
// per-slot path, which looks it up in the stream first (slotKnown). So
// a herd of one-shots is published first and recorded after, as the
// server's own @at schedules are.
func (w worker) deferRecords(items []*windowItem) (now, later []*windowItem) {
	if w.e.cfg.RecordLag < 0 {
		return items, nil
	}
	now = items[:0:0]
	for _, it := range items {
		if it.j.planned && it.j.at != 0 && it.ack != nil && !it.ack.Duplicate && it.claim.Seq > 0 {
			later = append(later, it)
			continue
		}
		now = append(now, it)
	}
	return now, later
}

// unchanged are the items' results when nothing of theirs was written.
func unchanged(items []*windowItem) []slotResult {
	out := make([]slotResult, len(items))
	for i, it := range items {
		out[i] = slotResult{id: it.j.id, state: it.j.state, stateRev: it.j.stateRev, planned: it.j.planned, settled: it.j.settled, checked: it.j.checked}
	}
	return out
}

// sendFires publishes every item's fire, each with its slot id as
// Nats-Msg-Id, without waiting: awaitFires waits for the
// acknowledgements.
func (w worker) sendFires(ctx context.Context, items []*windowItem) {
	stream := w.e.store.Layout().FiresStream
	for _, it := range items {
		msg, now, span := w.e.fireMsg(*it.j, it.claim, "")
		msg.Header.Set(jetstream.MsgIDHeader, it.claim.ID(it.j.id))
		it.span, it.dispatched = span, now
		it.sent = time.Now()
		f, err := w.e.store.PublishAsyncTo(ctx, msg, stream)
		if err == nil {
			it.fut = f
		}
		w.e.step(StepWindowSend)
	}
}

// awaitFires waits for the acknowledgements of the items' fires (sent by
// sendFires); one not acknowledged is published again (until shortly
// before the window expires). An item that can never be published is
// recorded as failed.
func (w worker) awaitFires(ctx context.Context, items []*windowItem) error {
	timer := pipeline.NewAckTimer()
	defer timer.Stop()
	for i, it := range items {
		var err error
		if it.fut != nil {
			it.ack, err = timer.Await(it.fut, it.sent)
		}
		if it.fut == nil || err != nil {
			endSpan(it.span, nil, err) // the republish has its own span
			w.e.step(StepRepublish)
			it.ack, err = w.e.publish(ctx, *it.j, it.claim, "")
			if permanent(err) {
				if ferr := w.e.failSlot(ctx, *it.j, it.claim, err); ferr != nil {
					endSpans(items[i+1:], ferr)
					return ferr
				}
				continue // settled as failed: no seq, a failed tick
			}
			if err != nil {
				err = fmt.Errorf("fire: window slot %s: %w", it.claim.ID(it.j.id), err)
				endSpans(items[i+1:], err)
				return err
			}
		} else {
			endSpan(it.span, it.ack, nil)
			w.e.pub.Acknowledged(it.sent, it.ack)
			w.e.published(*it.j, it.claim, "", it.dispatched, it.ack)
		}
		if it.ack != nil {
			it.claim.Seq = it.ack.Sequence
		}
		w.e.step(StepWindowPublish)
	}
	return nil
}

// claimCopy is the item's claim for its schedule's state record, a copy
// of its own: a pointer into the item would keep the whole item alive
// (its job, whose state points to the previous claim, whose item...) for
// as long as the schedule's state is kept, a chain one item longer at
// every fire (the soak's never-restarted instance grew by ~9 MiB of live
// heap a minute).
func (it *windowItem) claimCopy() *kvstore.Claim {
	c := it.claim
	return &c
}

// endSpans ends the dispatch spans of items whose acknowledgements were
// not awaited: the window stopped at an earlier one (err), and the shard's
// check decides their fate.
func endSpans(items []*windowItem, err error) {
	for _, it := range items {
		endSpan(it.span, nil, err)
	}
}

// recordWindow writes each item's state record (by CAS on the revision it
// was decided on, its claim carrying the fire's sequence), without waiting
// for each acknowledgement. The fire stream is the ledger: a published
// slot has no ledger entry. A state record that changed meanwhile (an
// operator's pause, another instance) is read again and the fire merged
// into it (see mergeFired).
func (w worker) recordWindow(ctx context.Context, items []*windowItem) error {
	if len(items) > 0 {
		// Past the guard the records stay as they are: the next owner
		// checks the window record and finds the fires in the stream.
		if err := w.guard(items[0].j.id); err != nil {
			return err
		}
	}
	futs := make([]jetstream.PubAckFuture, len(items))
	for i, it := range items {
		it.st.Claim = it.claimCopy()
		if f, err := w.e.store.UpdateStateAsync(ctx, it.j.id, it.st, it.j.stateRev); err == nil {
			futs[i] = f
		}
	}
	timer := pipeline.NewAckTimer()
	defer timer.Stop()
	sent := time.Now()
	var failed error
	for i, it := range items {
		var err error
		var ack *jetstream.PubAck
		if futs[i] != nil {
			ack, err = timer.Await(futs[i], sent)
		}
		if futs[i] != nil && err == nil {
			st := it.st
			it.r.state, it.r.stateRev, it.r.planned = &st, ack.Sequence, false
			it.r.settle(it.claim.Token)
		} else if failed == nil {
			// After one merge fails the others are not tried (each could
			// wait for a server that does not answer): their schedules
			// keep what they had, and the next decision finds their fires
			// (the window record's check, or slotKnown).
			failed = w.mergeFired(ctx, it)
		}
		if it.ack != nil && it.ack.Duplicate {
			w.e.notifySettled(it.j.id, "", true) // counted at the claim: taken back (see onSettle)
		}
	}
	return failed
}

// mergeFired records a window's fired slot on a state record that changed
// since the window was decided: it reads the record and, unless it shows
// the slot already (Next past it, or its claim on it), writes the slot's
// claim and the advanced Next into it by CAS, keeping what the change
// set. A removed schedule keeps no record.
func (w worker) mergeFired(ctx context.Context, it *windowItem) error {
	for range maxSteps {
		st, rev, err := w.e.store.GetState(ctx, it.j.id)
		switch {
		case errors.Is(err, kvstore.ErrNotFound):
			it.r.state, it.r.stateRev, it.r.planned, it.r.absent = nil, 0, false, true
			return nil
		case err != nil && !errors.Is(err, kvstore.ErrInvalid):
			return err
		}
		if shows(st, it.claim) {
			it.r.state, it.r.stateRev, it.r.planned = &st, rev, false
			return nil
		}
		merged := st
		merged.Next, merged.Ended, merged.NextReason, merged.NextNominal = it.st.Next, it.st.Ended, it.st.NextReason, it.st.NextNominal
		merged.Plan = it.st.Plan
		merged.Fires += max(it.fired, 1)
		merged.Claim = it.claimCopy()
		merged.UpdatedAt, merged.Owner = it.st.UpdatedAt, w.e.cfg.Instance
		if err := w.guard(it.j.id); err != nil {
			return err
		}
		n, err := w.e.store.UpdateState(ctx, it.j.id, merged, rev)
		if errors.Is(err, kvstore.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		it.r.state, it.r.stateRev, it.r.planned = &merged, n, false
		it.r.settle(it.claim.Token)
		return nil
	}
	return fmt.Errorf("fire: state of %s changed at each of %d merges of window slot %s: %w", it.j.id, maxSteps, it.claim.ID(it.j.id), kvstore.ErrConflict)
}

// recordOrList writes the deferred records of wj as one ended list when
// lists are allowed (those the list cannot stand for, and all of them if
// the list cannot be written, as state records), else as state records.
func (w worker) recordOrList(ctx context.Context, wj *recordJob) (*jsstore.EndedEntry, error) {
	items := wj.records
	if !wj.lists {
		return nil, w.recordWindow(ctx, items)
	}
	list, rest, err := w.listWindow(ctx, wj.shard, items)
	switch {
	case errors.Is(err, errNotOwned):
		return nil, err
	case err != nil:
		w.e.log.Warn("ended list not written; its one-shots are recorded one by one", "shard", wj.shard, "err", err)
	}
	return list, w.recordWindow(ctx, rest)
}
