package fires

import (
	"context"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/pipeline"
)

// The steady path's windows (docs/performance.md, "Where the steady
// state's CPU goes"). At a steady rate a fire quantum holds a few slots
// of many shards, one or two per shard: one window each, and each window
// a job of its own (a hop to a worker and one back), a CAS awaited and
// acknowledgements awaited. A bundle hands the small windows of one
// dispatch to one worker, which claims them all before awaiting any
// claim, then sends every claimed window's fires before awaiting any
// acknowledgement: per bundle one job, and about two round trips,
// whatever the number of shards. Each window keeps its own protocol and
// its own result (docs/protocol.md, "Window claims": its record's CAS,
// then its fires, then its state records), so the loop takes a bundle's
// results as it takes each window's.

// StepWindowBundle: a bundle of windows of several shards is claimed
// (fireBundleRun), before its windows' CASes.
const StepWindowBundle Step = "window-bundle"

// bundleMost is the most slots a window may hold to go into a bundle, and
// the most a bundle holds: a larger window (a herd, a backlog) is a job of
// its own, beside the others on the other workers. At 10,000 fires a
// second a 4 ms quantum holds ~40 slots: a few bundles on as many
// workers, rather than one worker whose round trips every slot waits
// behind (64 held the rate less well on a loaded box).
const bundleMost = 16

// fireBundle fires several shards' windows in one job (fireBundleRun).
type fireBundle struct{ jobs []*fireJob }

// bundleResult is what a fireBundle hands back: each window's result.
type bundleResult struct{ fires []*fireResult }

func (*bundleResult) windowResult() {}

func (b *fireBundle) run(ctx context.Context, w worker) windowResult {
	out := &bundleResult{fires: w.fireBundleRun(ctx, b.jobs)}
	for _, r := range out.fires {
		withProgress(r.results)
	}
	return out
}

// fireBundleRun claims every window of jobs (a shard's first window, with
// no record to compare with, synchronously; the others pipelined), then
// sends the fires of every window claimed, then awaits and records each
// window in turn.
func (w worker) fireBundleRun(ctx context.Context, jobs []*fireJob) []*fireResult {
	runs := make([]*windowRun, len(jobs))
	out := make([]*fireResult, len(jobs))
	for i, wj := range jobs {
		runs[i] = w.prepareWindow(ctx, wj)
		out[i] = runs[i].out
	}
	w.e.step(StepWindowBundle)
	claiming := runs[:0:0]
	for _, r := range runs {
		if !w.mayClaim(r) {
			continue
		}
		if r.wj.mark.rev == 0 {
			rev, err := w.e.store.PutWindow(ctx, r.win, 0)
			if w.claimed(r, rev, err) {
				claiming = append(claiming, r)
			}
			continue
		}
		f, err := w.e.store.PutWindowAsync(ctx, r.win, r.wj.mark.rev)
		if err != nil {
			w.claimed(r, 0, err)
			continue
		}
		r.claim, r.sent = f, time.Now()
		claiming = append(claiming, r)
	}
	timer := pipeline.NewAckTimer()
	defer timer.Stop()
	fired := claiming[:0]
	for _, r := range claiming {
		if r.claim != nil {
			ack, err := timer.Await(r.claim, r.sent)
			rev, err := jsstore.WindowAck(r.win, r.wj.mark.rev, ack, err)
			if !w.claimed(r, rev, err) {
				continue
			}
		}
		w.sendFires(ctx, r.items)
		fired = append(fired, r)
	}
	for _, r := range fired {
		w.finishWindow(ctx, r)
	}
	return out
}

// bundling reports whether small windows go out in bundles: with a fire
// quantum (Config.FireQuantum), the steady path.
func (b *batcher) bundling() bool { return b.l.e.cfg.FireQuantum > 0 }

// bundler fills the bundles of one sendWindows: a worker is reserved for
// a bundle when its first window comes, and the bundle is handed to it
// once it holds bundleMost slots, or at the end (send).
type bundler struct {
	jobs  []*fireJob
	slots int
}

// add puts job into the bundle being filled and reports whether it did:
// not when job is too large for a bundle, or when no worker is free for a
// new bundle (then the caller sends job on its own, or finds the pool full
// and stops).
func (u *bundler) add(p *pool, job *fireJob) bool {
	if len(job.items) > bundleMost {
		return false
	}
	if u.slots+len(job.items) > bundleMost {
		u.send(p)
	}
	if len(u.jobs) == 0 {
		if p.full() {
			return false
		}
		p.reserve()
	}
	u.jobs = append(u.jobs, job)
	u.slots += len(job.items)
	return true
}

// open reports whether a bundle is being filled (its worker reserved).
func (u *bundler) open() bool { return len(u.jobs) > 0 }

// fits reports whether a window of at most n slots joins the bundle being
// filled without a worker of its own.
func (u *bundler) fits(n int) bool { return u.open() && u.slots+n <= bundleMost }

// send hands the bundle being filled to its reserved worker: a bundle of
// one window as a plain window job.
func (u *bundler) send(p *pool) {
	switch len(u.jobs) {
	case 0:
		return
	case 1:
		p.sendReserved(u.jobs[0])
	default:
		p.sendReserved(&fireBundle{jobs: u.jobs})
	}
	u.jobs, u.slots = nil, 0
}
