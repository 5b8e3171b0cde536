package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/pipeline"
)

// silentFuture is an acknowledgement that never comes: a reply lost
// without the connection dropping.
type silentFuture struct{}

func (silentFuture) Ok() <-chan *jetstream.PubAck { return nil }
func (silentFuture) Err() <-chan error            { return nil }
func (silentFuture) Msg() *nats.Msg               { return nil }

// TestAckTimerGivesUpOnASilentWrite: a write whose acknowledgement never
// comes is reported failed AckWait after it was sent, and no sooner.
func TestAckTimerGivesUpOnASilentWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := pipeline.NewAckTimer()
		defer a.Stop()
		sent := time.Now()
		_, err := a.Await(silentFuture{}, sent)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Await = %v, want DeadlineExceeded", err)
		}
		if waited := time.Since(sent); waited != pipeline.AckWait {
			t.Fatalf("gave up after %s, want %s", waited, pipeline.AckWait)
		}
		// A write sent long ago gets no further wait.
		sent = time.Now().Add(-time.Hour)
		if _, err := a.Await(silentFuture{}, sent); !errors.Is(err, context.DeadlineExceeded) || time.Since(sent) != time.Hour {
			t.Fatalf("Await of an old write = %v after %s", err, time.Since(sent))
		}
	})
}
