// Package lifecycle is the start/stop discipline of every long-running
// part of jetsched (the engines, the leases, the in-flight trackers, the
// auditor), written once: Start returns once the part runs, Stop blocks
// until it has exited or returns ctx.Err() when its context ends first;
// both may be called twice, Stop before Start is a no-op, and a stopped
// part can start again.
package lifecycle

import (
	"context"
	"errors"
	"sync"
)

// Service runs one background body at a time. Its zero value is a
// stopped service. Embed it (or keep one) in a long-running type and call
// Start and Stop from the type's own Start and Stop.
type Service struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// ErrStopping is returned by Start while a Stop is still waiting for the
// previous run to exit.
var ErrStopping = errors.New("lifecycle: stopping")

// Setup prepares a run: ctx bounds the setup (the caller's Start
// context), life ends when Stop is called (for watches and subscriptions
// that live as long as the run). It returns the body, run in a goroutine
// of its own until it returns; the body must return soon after life ends.
type Setup func(ctx, life context.Context) (body func(), err error)

// Start runs setup and then its body. It returns setup's error (and the
// service stays stopped), or nil once the body runs. Start on a running
// service does nothing and returns nil.
func (s *Service) Start(ctx context.Context, setup Setup) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		select {
		case <-s.done:
			s.done = nil // stopped (or its body returned): start again
		default:
			if s.cancel == nil {
				return ErrStopping
			}
			return nil // running
		}
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	body, err := setup(ctx, life)
	if err != nil {
		cancel()
		return err
	}
	done := make(chan struct{})
	s.cancel, s.done = cancel, done
	go func() {
		defer close(done)
		body()
	}()
	return nil
}

// Stop ends the run and waits for its body to return, or returns ctx.Err()
// if ctx ends first (the body then goes on stopping; Stop may be called
// again to wait for it). Stop on a stopped service returns nil.
func (s *Service) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Running reports whether a body is running (started and not yet
// returned).
func (s *Service) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Done is closed when the current run's body returns (nil when the
// service never started).
func (s *Service) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}
