package readmodel

import (
	"context"
	"time"
)

// Runner owns the goroutine of a follower: the watches that keep a
// listing's view of the buckets current (the admin API's catalogue, the
// console's index, fire and audit feeds). Run calls follow until Stop;
// when follow fails it reports the error to failed and calls follow
// again retry later, which loads the view anew. The zero Runner is
// ready; a stopped Runner can run again.
type Runner struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// Run starts the follower's goroutine and returns.
func (r *Runner) Run(ctx context.Context, retry time.Duration, follow func(context.Context) error, failed func(error)) {
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			err := follow(ctx)
			if ctx.Err() != nil {
				return
			}
			failed(err)
			t.Reset(retry)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends the follower and waits for it. Stop before Run is a no-op.
func (r *Runner) Stop() {
	if r.cancel == nil {
		return
	}
	r.cancel()
	<-r.done
}
