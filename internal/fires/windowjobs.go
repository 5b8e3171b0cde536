package fires

import (
	"context"

	"github.com/jetsched/jetsched/internal/jsstore"
)

// A window's work (docs/protocol.md, "Window claims") comes in five
// kinds, each a job type of its own with a result type of its own:
//
//	fireJob   -> *fireResult    claim a batch of a shard's due slots with one CAS, publish, record
//	checkJob  -> *checkResult   read a shard's window record and ended lists on taking it
//	demoteJob -> *demoteResult  turn the slots of a window record no state record shows into claims
//	recordJob -> *recordResult  write the state records a fire left for later, or an ended list
//	sweepJob  -> *sweepResult   write what an ended list stands for, and delete it
//
// The loop's pool hands a windowJob to a worker, which runs it; the
// batcher takes the result back by its type (batcher.apply).

// windowJob is a window's work for a worker: a *fireJob, *checkJob,
// *demoteJob, *recordJob or *sweepJob.
type windowJob interface {
	// run does the job on worker w and hands back its result.
	run(ctx context.Context, w worker) windowResult
}

// windowResult is what a windowJob hands back: a *fireResult,
// *checkResult, *demoteResult, *recordResult or *sweepResult.
type windowResult interface {
	windowResult() // marks the result types; the batcher switches on them
}

// windowMark is what this instance knows of a shard's window record.
type windowMark struct {
	rev uint64 // its revision (0: none)
	seq uint64 // its Seq
}

// fireJob claims the due slots items of shard with one window CAS over
// the shard's window record mark, publishes them, then writes their state
// records (fireWindow).
type fireJob struct {
	shard int
	mark  windowMark
	items []slotJob
}

// fireResult is what a fireJob hands back.
type fireResult struct {
	shard int
	// mark is the window record written (rev 0: none).
	mark windowMark
	// results are the items' outcomes, as a per-slot job's would be.
	results []slotResult
	// declined are the items whose decision was not a plain claim: the
	// loop sends them through the per-slot path.
	declined []string
	// recheck: the window CAS lost, or the window did not finish; the
	// shard is checked again before anything of it is dispatched.
	recheck bool
	// tooLarge: the server refused the window record for its size.
	tooLarge bool
	// deferred are fired slots whose state records were not written
	// yet (see deferRecords): their schedules stay busy until a
	// recordJob writes them.
	deferred []*windowItem
	err      error
}

func (j *fireJob) run(ctx context.Context, w worker) windowResult {
	out := w.fireWindow(ctx, j)
	withProgress(out.results)
	return out
}

// checkJob reads shard's window record and ended lists for the lease
// tenure gen, on taking the shard (checkWindow).
type checkJob struct {
	shard int
	gen   uint64
}

// checkResult is what a checkJob hands back: the shard's window record
// as read (found nil: none, or garbage) and its ended lists.
type checkResult struct {
	shard int
	gen   uint64
	mark  windowMark
	found *jsstore.Window
	lists []jsstore.EndedEntry
	err   error
}

func (j *checkJob) run(ctx context.Context, w worker) windowResult { return w.checkWindow(ctx, j) }

// demoteJob turns each slot of window record win that no state record
// shows into a claim on that record (see docs/protocol.md, "Window
// claims"), for shard's check in tenure gen. known are the loop's
// snapshots of win's schedules, by id.
type demoteJob struct {
	shard int
	gen   uint64
	win   jsstore.Window
	known map[string]slotJob
}

// demoteResult is what a demoteJob hands back.
type demoteResult struct {
	shard int
	gen   uint64
	wrote []demoted // the records written, for the loop to adopt before it dispatches the shard
	err   error
}

func (j *demoteJob) run(ctx context.Context, w worker) windowResult {
	out := &demoteResult{shard: j.shard, gen: j.gen}
	for _, s := range j.win.Slots {
		d, err := w.demote(ctx, j.win, s, j.known[s.Schedule])
		if err != nil {
			out.err = err
			break
		}
		if d != nil {
			out.wrote = append(out.wrote, *d)
		}
	}
	return out
}

// recordJob writes the state records of fired slots a fireJob left for
// later (see deferRecords), or that a window left behind (behind.go): as
// an ended list when lists is set (ended.go), else one by one.
type recordJob struct {
	shard   int
	records []*windowItem
	lists   bool
}

// recordResult is what a recordJob hands back: the records' outcomes and
// the ended list it wrote, if any.
type recordResult struct {
	shard   int
	results []slotResult
	wrote   *jsstore.EndedEntry
	err     error
}

func (j *recordJob) run(ctx context.Context, w worker) windowResult {
	out := &recordResult{shard: j.shard}
	out.wrote, out.err = w.recordOrList(ctx, j)
	w.e.step(StepWindowRecorded)
	out.results = make([]slotResult, 0, len(j.records))
	for _, it := range j.records {
		out.results = append(out.results, it.r)
	}
	withProgress(out.results)
	return out
}

// sweepJob sweeps ended list list: writes the records it stands for, of
// items (if any), and deletes it (ended.go).
type sweepJob struct {
	list  *endedList
	items []slotJob
}

// sweepResult is what a sweepJob hands back; deleted: the list is gone.
type sweepResult struct {
	list    *endedList
	results []slotResult
	deleted bool
	err     error
}

func (j *sweepJob) run(ctx context.Context, w worker) windowResult {
	out := w.sweepEnded(ctx, j)
	withProgress(out.results)
	return out
}

func (*fireResult) windowResult()   {}
func (*checkResult) windowResult()  {}
func (*demoteResult) windowResult() {}
func (*recordResult) windowResult() {}
func (*sweepResult) windowResult()  {}

// withProgress gives each of a window job's slot results progress as a
// slot job's would have (worker.slot): its state written.
func withProgress(rs []slotResult) {
	for i := range rs {
		r := &rs[i]
		r.progress = r.stateRev != 0 && r.err == nil
	}
}
