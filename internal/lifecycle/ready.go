package lifecycle

import "sync"

// Ready is a restartable service's "ready" signal: a channel that the
// current run closes once (an engine, when its index is complete), and
// that a new run replaces once the old one was closed. The zero Ready is
// open and ready to use.
type Ready struct {
	mu sync.Mutex
	ch chan struct{}
}

// C is the current run's channel.
func (r *Ready) C() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current()
}

// Next is the channel a starting run closes when it is ready: the current
// one if it is still open, else a new one (a restart).
func (r *Ready) Next() chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.current():
		r.ch = make(chan struct{})
	default:
	}
	return r.ch
}

func (r *Ready) current() chan struct{} {
	if r.ch == nil {
		r.ch = make(chan struct{})
	}
	return r.ch
}
