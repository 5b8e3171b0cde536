package demoworker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// consumer is a durable pull consumer with a consume loop that Stop
// drains.
type consumer struct {
	mu sync.Mutex // handlers never take it: Stop holds it while draining
	cc jetstream.ConsumeContext
}

// start creates or updates the durable consumer and consumes with h.
func (c *consumer) start(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.ConsumerConfig, h jetstream.MessageHandler) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cc != nil {
		return errors.New("demoworker: already started")
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, cfg)
	if err != nil {
		return fmt.Errorf("demoworker: consumer %s on %s: %w", cfg.Durable, stream, err)
	}
	cc, err := cons.Consume(h)
	if err != nil {
		return fmt.Errorf("demoworker: consume %s: %w", stream, err)
	}
	c.cc = cc
	return nil
}

// Stop drains: in-flight handlers finish, then it returns. Safe to call
// more than once, and before Start.
func (c *consumer) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cc == nil {
		return
	}
	c.cc.Drain()
	<-c.cc.Closed()
	c.cc = nil
}
