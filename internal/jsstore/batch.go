package jsstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/compile"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/pkg/calendar"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// SpecWrite is one schedule for SaveSpecs: its id and spec.
type SpecWrite struct {
	ID   string
	Spec kvstore.Spec
}

// SpecResult is what SaveSpecs did with one SpecWrite: what SaveSpec
// would return.
type SpecResult struct {
	Saved
	Err error
}

// ErrNotWritten is the result of a valid spec of a SaveSpecs batch that
// was not written because another one was refused.
var ErrNotWritten = errors.New("kvstore: not written")

// readConcurrency bounds the reads SaveSpecs has in flight.
const readConcurrency = 32

// SaveSpecs saves many specs as SaveSpec saves each (the same validation,
// anchors, static rules, unchanged specs written not at all, one audit
// intent per write, appended before it), but pipelined: the stored specs
// are read concurrently, the intents appended in one chained run (when the
// trail does not take them all, nothing is written and every result to be
// written is ErrAuditUnavailable), and the writes sent without waiting for
// each acknowledgement (each by compare-and-swap on the revision read,
// carrying its intent's sequence). Every spec is validated before any is written: when
// one is refused, none is written and the others' results are
// ErrNotWritten. A write that loses its compare-and-swap (a writer
// in between, a key over a delete marker, an id given twice) is done
// again by SaveSpec. With check, nothing is written: each result says
// what a save would do (Created, Unchanged with the stored revision) or
// why it would be refused. Results are in ws's order.
func (s *Store) SaveSpecs(ctx context.Context, ws []SpecWrite, o SaveOptions, check bool) []SpecResult {
	res := make([]SpecResult, len(ws))
	curs := s.readSpecs(ctx, ws, res)
	cals := cachedCalendars(s.CalendarSource(ctx))
	plans := make([]specPlan, len(ws))
	for i, w := range ws {
		if res[i].Err != nil {
			continue
		}
		if err := o.checkStatic(w.Spec); err != nil {
			res[i].Err = err
			continue
		}
		p, err := s.planSpec(ctx, w.ID, w.Spec, curs[i], o, cals)
		plans[i], res[i].Err = p, err
		switch {
		case err != nil:
		case p.unchanged:
			res[i].Saved = p.saved
		case check:
			res[i].Created = curs[i] == nil
		}
	}
	if check {
		return res
	}
	if slices.ContainsFunc(res, func(r SpecResult) bool { return r.Err != nil }) {
		for i := range res {
			if res[i].Err == nil {
				res[i] = SpecResult{Err: fmt.Errorf("%w: schedule %q: another schedule of the batch was refused", ErrNotWritten, ws[i].ID)}
			}
		}
		return res
	}
	marks, err := s.intendSpecs(ctx, ws, plans, curs, res)
	if err != nil {
		for i := range res {
			if res[i].Err == nil && !plans[i].unchanged {
				res[i] = SpecResult{Err: err}
			}
		}
		return res
	}
	futures := make([]jetstream.PubAckFuture, len(ws))
	for i, w := range ws {
		if res[i].Err != nil || plans[i].unchanged {
			continue
		}
		var rev uint64
		if curs[i] != nil {
			rev = curs[i].Revision()
		}
		m := s.updateMsg(s.specs, w.ID, plans[i].data, rev)
		marks[i].set(m)
		f, err := s.PublishAsync(ctx, m)
		if err != nil {
			res[i].Err = fmt.Errorf("kvstore: save spec %q: %w", w.ID, err)
			continue
		}
		futures[i] = f
	}
	var again []int
	var abandoned []AuditMark
	for i, f := range futures {
		if f == nil {
			if res[i].Err != nil {
				abandoned = append(abandoned, marks[i])
			}
			continue
		}
		select {
		case ack := <-f.Ok():
			res[i].Saved = Saved{Revision: ack.Sequence, Created: curs[i] == nil}
			continue
		case err := <-f.Err():
			if natserr.WrongLastSequence(err) {
				again = append(again, i)
			} else {
				res[i].Err = fmt.Errorf("kvstore: save spec %q: %w", ws[i].ID, err)
			}
		case <-ctx.Done():
			res[i].Err = fmt.Errorf("kvstore: save spec %q: %w", ws[i].ID, ctx.Err())
		}
		abandoned = append(abandoned, marks[i])
	}
	s.Abandon(ctx, errors.New("the write was not made (a compare-and-swap lost, retried with an intent of its own, or it failed)"), abandoned...)
	for _, i := range again {
		res[i].Saved, res[i].Err = s.SaveSpec(ctx, ws[i].ID, ws[i].Spec, o)
	}
	return res
}

// intendSpecs appends the intents of the writes to make (a result with no
// error and a plan that is not unchanged), in order, and returns each
// write's mark (by index). When the trail does not take them all, the
// appended ones are abandoned and the error wraps ErrAuditUnavailable:
// none is to be written.
func (s *Store) intendSpecs(ctx context.Context, ws []SpecWrite, plans []specPlan, curs []jetstream.KeyValueEntry, res []SpecResult) ([]AuditMark, error) {
	marks := make([]AuditMark, len(ws))
	if s.auditor == nil {
		return marks, nil
	}
	var idx []int
	var ins []Intent
	for i, w := range ws {
		if res[i].Err == nil && !plans[i].unchanged {
			idx = append(idx, i)
			ins = append(ins, plans[i].intent(s.layout, w.ID, curs[i]))
		}
	}
	if len(ins) == 0 {
		return marks, nil
	}
	var seqs []uint64
	var err error
	if batch, ok := s.auditor.(BatchAuditor); ok {
		seqs, err = batch.IntendAll(ctx, ins)
	} else {
		for _, in := range ins {
			var seq uint64
			if seq, err = s.auditor.Intend(ctx, in); err != nil {
				break
			}
			seqs = append(seqs, seq)
		}
	}
	for k, seq := range seqs {
		marks[idx[k]] = AuditMark(seq)
	}
	if err != nil {
		err = auditUnavailable("schedule.import", fmt.Sprintf("(%d schedules)", len(ins)), err)
		s.Abandon(ctx, err, marks...)
		return nil, err
	}
	return marks, nil
}

// readSpecs reads the stored spec of every write whose result has no
// error yet, readConcurrency at a time: nil where there is none. A read
// that fails sets the result's error.
func (s *Store) readSpecs(ctx context.Context, ws []SpecWrite, res []SpecResult) []jetstream.KeyValueEntry {
	curs := make([]jetstream.KeyValueEntry, len(ws))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(readConcurrency, len(ws)) {
		wg.Go(func() {
			for i := range next {
				e, err := get(ctx, s.specs, "schedule", ws[i].ID)
				switch {
				case err == nil:
					curs[i] = e
				case !errors.Is(err, kvstore.ErrNotFound):
					res[i].Err = fmt.Errorf("kvstore: read spec %q: %w", ws[i].ID, err)
				}
			}
		})
	}
	for i := range ws {
		next <- i
	}
	close(next)
	wg.Wait()
	return curs
}

// cachedCalendars is src reading each calendar once (for one batch).
func cachedCalendars(src compile.CalendarSource) compile.CalendarSource {
	type got struct {
		c   *calendar.Calendar
		err error
	}
	seen := map[string]got{}
	return func(name string) (*calendar.Calendar, error) {
		if g, ok := seen[name]; ok {
			return g.c, g.err
		}
		c, err := src(name)
		seen[name] = got{c, err}
		return c, err
	}
}
