package fires

import (
	"context"
	"sync"
)

// pool is the loop's side of its workers: one channel of jobs and one of
// results per kind of job. The loop sends a slot's snapshot (slotJob) or
// a window's work (a windowJob: fireJob, checkJob, demoteJob, recordJob,
// sweepJob) and takes back a slotResult or the window job's own result
// type (windowjobs.go); nothing else crosses. Only the loop goroutine touches
// busy; the channels are the only state the workers share with it.
type pool struct {
	slots   chan slotJob
	windows chan windowJob
	// slotDone and windowDone carry the workers' results to the loop.
	slotDone   chan slotResult
	windowDone chan windowResult
	// busy counts the jobs out, of both kinds. It never passes
	// Config.Workers, the channels' capacity: a send never blocks.
	busy int
	size int
}

func newPool(workers int) pool {
	return pool{
		slots: make(chan slotJob, workers), windows: make(chan windowJob, workers),
		slotDone: make(chan slotResult, workers), windowDone: make(chan windowResult, workers),
		size: workers,
	}
}

// full reports whether every worker holds a job.
func (p *pool) full() bool { return p.busy >= p.size }

// sendSlot hands a slot's job to a worker.
func (p *pool) sendSlot(j slotJob) {
	p.busy++
	p.slots <- j // never blocks: busy <= size == cap
}

// sendWindow hands a window's job to a worker.
func (p *pool) sendWindow(wj windowJob) {
	p.busy++
	p.windows <- wj
}

// reserve takes a worker for a window job handed to it later
// (sendReserved): a bundle being filled.
func (p *pool) reserve() { p.busy++ }

// sendReserved hands a window job to the worker reserved for it.
func (p *pool) sendReserved(wj windowJob) { p.windows <- wj }

// start runs the workers on wg until close. Workers use their own
// context (work): on Stop they finish the job they hold (bounded by its
// claim's expiry) instead of abandoning it midway.
func (p *pool) start(work context.Context, wg *sync.WaitGroup, w worker) {
	for range p.size {
		wg.Go(func() {
			slots, windows := p.slots, p.windows
			for slots != nil || windows != nil {
				select {
				case j, ok := <-slots:
					if !ok {
						slots = nil
						continue
					}
					p.slotDone <- w.slot(work, j)
				case wj, ok := <-windows:
					if !ok {
						windows = nil
						continue
					}
					p.windowDone <- wj.run(work, w)
				}
			}
		})
	}
}

// close tells the workers no more jobs come.
func (p *pool) close() {
	close(p.slots)
	close(p.windows)
}
