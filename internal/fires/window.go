package fires

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/internal/readmodel"
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

// windowKind is what a window job does.
type windowKind int

const (
	// windowFire claims a batch of due slots of one shard with one CAS,
	// publishes them, then writes their state records and ledger entries.
	windowFire windowKind = iota + 1
	// windowCheck reads the shard's window record on taking the shard.
	windowCheck
	// windowDemote turns each slot of a window record that no state
	// record shows into a claim on that record (see docs/protocol.md,
	// "Window claims").
	windowDemote
	// windowRecord writes the state records a windowFire left for later
	// (see deferRecords), or an ended list of them (ended.go).
	windowRecord
	// windowEnded sweeps an ended list: writes the records it stands for
	// (if any are given) and deletes it (ended.go).
	windowEnded
)

// windowMark is what this instance knows of a shard's window record.
type windowMark struct {
	rev uint64 // its revision (0: none)
	seq uint64 // its Seq
}

// windowJob is a window's work for a worker.
type windowJob struct {
	kind  windowKind
	shard int
	mark  windowMark
	// items are the due schedules (windowFire).
	items []job
	// win is the record to demote, known the loop's snapshots of its
	// schedules, by id (windowDemote).
	win   kvstore.Window
	known map[string]job
	gen   uint64 // the lease tenure a check is for
	// records are the fired slots whose state records to write
	// (windowRecord); lists: as an ended list (ended.go).
	records []*windowItem
	lists   bool
	// list is the ended list to sweep (windowEnded).
	list *endedList
}

// windowResult is what a window job hands back.
type windowResult struct {
	kind  windowKind
	shard int
	gen   uint64
	mark  windowMark
	// results are the items' outcomes, as a per-slot job's would be.
	results []result
	// declined are the items whose decision was not a plain claim: the
	// loop sends them through the per-slot path.
	declined []string
	// recheck: the window CAS lost, or the window did not finish; the
	// shard is checked again before anything of it is dispatched.
	recheck bool
	// tooLarge: the server refused the window record for its size.
	tooLarge bool
	// found is the window record a check read (nil: none, or garbage).
	found *kvstore.Window
	// deferred are fired slots whose state records were not written
	// yet (see deferRecords): their schedules stay busy until a
	// windowRecord job writes them.
	deferred []*windowItem
	// lists are the shard's ended lists a check read; wrote is the
	// ended list a windowRecord wrote; deleted: a windowEnded deleted its
	// list.
	lists   []kvstore.EndedEntry
	wrote   *kvstore.EndedEntry
	list    *endedList
	deleted bool
	err     error
}

// windowItem is one slot of a window being fired.
type windowItem struct {
	j     *job // in its window job's items
	r     result
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

// window runs a window job.
func (w worker) window(ctx context.Context, wj *windowJob) windowResult {
	switch wj.kind {
	case windowCheck:
		return w.checkWindow(ctx, wj)
	case windowDemote:
		out := windowResult{kind: windowDemote, shard: wj.shard, gen: wj.gen}
		for _, s := range wj.win.Slots {
			if err := w.demote(ctx, wj.win, s, wj.known[s.Schedule]); err != nil {
				out.err = err
				break
			}
		}
		return out
	case windowEnded:
		return w.sweepEnded(ctx, wj)
	case windowRecord:
		out := windowResult{kind: windowRecord, shard: wj.shard}
		out.wrote, out.err = w.recordOrList(ctx, wj)
		w.e.step(StepWindowRecorded)
		for _, it := range wj.records {
			out.results = append(out.results, it.r)
		}
		return out
	}
	return w.fireWindow(ctx, wj)
}

// fireWindow claims the due slots of wj with one window CAS, publishes
// them without waiting for each acknowledgement, then writes each
// schedule's state (with the fire's sequence, which settles its claim)
// and ledger entry the same way.
func (w worker) fireWindow(ctx context.Context, wj *windowJob) windowResult {
	out := windowResult{kind: windowFire, shard: wj.shard, mark: wj.mark}
	now := w.e.cfg.Clock.Now()
	win := kvstore.Window{Shard: wj.shard, Seq: wj.mark.seq + 1, Token: randomID(), Owner: w.e.cfg.Instance,
		At: now.UTC(), Expires: now.Add(w.e.cfg.ClaimTTL).UTC()}
	name := win.Name()
	win.Slots = make([]kvstore.WindowSlot, 0, len(wj.items))
	out.results = make([]result, 0, len(wj.items))
	items := make([]*windowItem, 0, len(wj.items))
	slab := make([]windowItem, 0, len(wj.items)) // one allocation for the window's items
	lags := w.lookUpLags(ctx, wj.items)
	for i := range wj.items {
		j := &wj.items[i]
		r := result{id: j.id, state: j.state, stateRev: j.stateRev, planned: j.planned, settled: j.settled, checked: j.checked}
		if lags[i] || j.planned && j.stateRev > 0 {
			// Behind the stream, or not looked up: the per-slot path
			// writes the catch-up (or tries the lookup again). Or its
			// record was deleted: the per-slot path checks its spec first
			// (specCurrent).
			out.declined = append(out.declined, j.id)
			out.results = append(out.results, r)
			continue
		}
		d := Decide(w.e.decideInput(now, j.id, j.target, j.compiled, j.written, j.state, j.settled, j.checked))
		if !plainClaim(d) {
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
		win.Slots = append(win.Slots, kvstore.WindowSlot{Schedule: j.id, Slot: c.Slot, Reason: c.Reason})
	}
	if len(items) == 0 {
		return out
	}
	w.e.step(StepBeforeWindow)
	if !w.e.leases.owns(wj.shard) {
		out.recheck, out.err = true, fmt.Errorf("%w: shard %d", errNotOwned, wj.shard)
		out.results = append(out.results, unchanged(items)...)
		return out
	}
	rev, err := w.e.store.PutWindow(ctx, win, wj.mark.rev)
	if permanent(err) {
		// The server refuses a record this large (a small max_payload):
		// these slots go per slot, and the loop makes windows smaller.
		w.e.step(StepWindowRefused)
		out.tooLarge, out.err = true, err
		for _, it := range items {
			out.declined = append(out.declined, it.j.id)
		}
		out.results = append(out.results, unchanged(items)...)
		return out
	}
	if err != nil {
		out.recheck, out.err = true, err
		out.results = append(out.results, unchanged(items)...)
		return out
	}
	out.mark = windowMark{rev: rev, seq: win.Seq}
	w.e.step(StepAfterWindow)
	for range items {
		w.e.cfg.Observer.Claimed(false)
	}
	if err := w.publishWindow(ctx, items); err != nil {
		// The slots are claimed and perhaps published: the shard is
		// checked again, which turns them into claims on their records.
		out.recheck, out.err = true, err
		out.results = append(out.results, unchanged(items)...)
		return out
	}
	w.e.step(StepWindowPublished)
	items, out.deferred = w.deferRecords(items)
	items = w.leaveBehind(items, &out)
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
	return out
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

// plainClaim reports whether d fires one regular slot and nothing else: no
// catch-up, no misses or calendar skips to record, no cancel. Only such
// slots go into a window; the others take the per-slot path.
func plainClaim(d Decision) bool {
	return d.Action == ActClaim && d.Reason == "" && d.Missed == 0 && d.Cancel == "" &&
		len(d.Step.Skipped) == 0 && d.Step.SkippedCount == 0
}

// unchanged are the items' results when nothing of theirs was written.
func unchanged(items []*windowItem) []result {
	out := make([]result, len(items))
	for i, it := range items {
		out[i] = result{id: it.j.id, state: it.j.state, stateRev: it.j.stateRev, planned: it.j.planned, settled: it.j.settled, checked: it.j.checked}
	}
	return out
}

// publishWindow publishes every item's fire, each with its slot id as
// Nats-Msg-Id, and waits for the acknowledgements; one not acknowledged is
// published again (until shortly before the window expires). An item that
// can never be published is recorded as failed.
func (w worker) publishWindow(ctx context.Context, items []*windowItem) error {
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

// shows reports whether state st already accounts for claim c's slot: its
// claim is on that slot, or its Next is past it (or the recurrence ended).
func shows(st kvstore.State, c kvstore.Claim) bool {
	if st.Claim != nil && st.Claim.SlotID == "" && st.Claim.Slot.Equal(c.Slot) {
		return true
	}
	return st.Ended || st.Next.After(c.Slot)
}

// checkWindow reads the shard's window record, when this instance takes
// the shard or after a window of its own did not finish. The loop then
// has each slot it lists that no state record shows demoted: written into
// that record as the window's claim (same token, owner and expiry), which
// the per-slot protocol waits for, looks up in the ledger and takes over
// if missing, exactly as a claim whose owner died. Nothing of the shard is
// dispatched until then.
func (w worker) checkWindow(ctx context.Context, wj *windowJob) windowResult {
	out := windowResult{kind: windowCheck, shard: wj.shard, gen: wj.gen}
	win, rev, err := w.e.store.GetWindow(ctx, wj.shard)
	switch {
	case errors.Is(err, kvstore.ErrNotFound):
	case errors.Is(err, kvstore.ErrInvalid):
		w.e.log.Warn("undecodable window record; the next window replaces it", "shard", wj.shard, "revision", rev, "err", err)
		out.mark = windowMark{rev: rev}
	case err != nil:
		out.err = err
	default:
		out.mark, out.found = windowMark{rev: rev, seq: win.Seq}, &win
	}
	if out.err != nil {
		return out
	}
	out.lists, out.err = w.e.store.EndedLists(ctx, wj.shard, func(key string, err error) {
		w.e.log.Warn("undecodable ended list ignored; it stands for no record", "key", key, "err", err)
	})
	return out
}

// recordOrList writes the deferred records of wj as one ended list when
// lists are allowed (those the list cannot stand for, and all of them if
// the list cannot be written, as state records), else as state records.
func (w worker) recordOrList(ctx context.Context, wj *windowJob) (*kvstore.EndedEntry, error) {
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

// demote writes window win's claim on slot s into the schedule's state
// record unless the record shows the slot already. known is the loop's
// snapshot of the schedule (zero when it has none); a conflict re-reads.
func (w worker) demote(ctx context.Context, win kvstore.Window, s kvstore.WindowSlot, known job) error {
	c := win.Claim(s)
	if c.Slot.After(win.At.Add(windowSkew)) || c.Slot.IsZero() {
		// A window claims due slots only: this record is forged or from a
		// clock far off. Its slot is not made a claim (the schedule's own
		// record decides when it fires).
		w.e.log.Warn("window record lists a slot after its own time; ignored", "schedule", s.Schedule, "slot", c.Slot, "window", win.Name(), "window_at", win.At)
		return nil
	}
	st, rev, exists := known.state, known.stateRev, known.state != nil && !known.planned
	if known.id == "" {
		exists = false
		rec, r, err := w.e.store.GetState(ctx, s.Schedule)
		switch {
		case err == nil:
			st, rev, exists = &rec, r, true
		case errors.Is(err, kvstore.ErrNotFound):
			switch _, serr := w.e.store.GetSpec(ctx, s.Schedule); {
			case errors.Is(serr, kvstore.ErrNotFound):
				return nil // removed: no record to write, nothing left to fire
			case serr != nil && !errors.Is(serr, kvstore.ErrInvalid):
				return serr
			}
		default:
			return err
		}
	}
	if !exists {
		// No state record, yet the window names a slot of the schedule: a
		// window left behind (its owner stopped before checking it) whose
		// schedule's record was deleted by hand since. If the stream holds
		// this slot or a later regular one, the window's claim is settled:
		// a claim written now would take the schedule back to this slot
		// and pass over the fires after it. The schedule's own decision,
		// without a record, starts from the stream's last fire
		// (readmodel.PlannedBehind).
		f, found, err := readmodel.LastRegularFire(ctx, w.e.store, s.Schedule)
		if err != nil {
			return err
		}
		if found && !f.Slot.Before(c.Slot) {
			w.e.log.Info("window slot settled by the stream (the schedule has no state record)", "schedule", s.Schedule,
				"slot", c.Slot, "window", win.Name(), "window_owner", win.Owner, "last_fired", f.Slot)
			return nil
		}
	}
	for range maxSteps {
		var next kvstore.State
		caughtUp := false
		if exists {
			if shows(*st, c) {
				return nil
			}
			next = *st
			// A record behind the stream by more than this slot (its
			// owner left it behind, behind.go): if the stream holds this
			// slot or a later one, the record takes the stream's last
			// fire, settled, with the fires in between.
			if caught, err := w.lagging(ctx, s.Schedule, known.compiled, st); err == nil && caught != nil && !caught.Claim.Slot.Before(c.Slot) {
				next, caughtUp = *caught, true
			}
		} else if known.state != nil {
			next = *known.state // a plan: its Plan and Next
		}
		if !caughtUp {
			if next.Next.IsZero() || next.Next.After(c.Slot) {
				next.Next = c.Slot // Decide moves past the claim once it is settled
			}
			next.Claim = &c
			next.Fires++
		}
		next.UpdatedAt, next.Owner = w.e.cfg.Clock.Now().UTC(), w.e.cfg.Instance
		if err := w.guard(s.Schedule); err != nil {
			return err
		}
		var err error
		if exists {
			_, err = w.e.store.UpdateState(ctx, s.Schedule, next, rev)
		} else {
			_, err = w.e.store.CreateState(ctx, s.Schedule, next)
		}
		if err == nil && caughtUp {
			return nil // (lagging logged it)
		}
		if err == nil {
			w.e.log.Info("window slot turned into a claim on its record", "schedule", s.Schedule, "slot", c.Slot, "window", win.Name(), "window_owner", win.Owner)
			return nil
		}
		if !errors.Is(err, kvstore.ErrConflict) {
			return err
		}
		rec, r, gerr := w.e.store.GetState(ctx, s.Schedule)
		switch {
		case gerr == nil:
			st, rev, exists = &rec, r, true
		case errors.Is(gerr, kvstore.ErrNotFound):
			exists = false
		default:
			return gerr
		}
	}
	return fmt.Errorf("fire: state of %s changed at each of %d attempts to record window slot %s: %w", s.Schedule, maxSteps, c.ID(s.Schedule), kvstore.ErrConflict)
}
