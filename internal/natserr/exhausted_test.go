package natserr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/natserr"
)

// The answers nats-server 2.15 gives (its errors.json and stream.go).
var (
	full    = &jetstream.APIError{Code: 503, ErrorCode: 10077, Description: "maximum messages exceeded"}
	account = &jetstream.APIError{Code: 400, ErrorCode: 10002, Description: "resource limits exceeded for account"}
	tooBig  = &jetstream.APIError{Code: 400, ErrorCode: 10054, Description: "message size exceeds maximum allowed"}
	ioErr   = &jetstream.APIError{Code: 503, ErrorCode: 10077, Description: "message too large"}
)

// TestClassify: a full stream or account is its own refusal, never the
// permanent "too large"; an unanswered write is unacknowledged, wrapped
// or not.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want natserr.Refusal
	}{
		{full, natserr.StreamFull},
		{fmt.Errorf("publish x: %w", full), natserr.StreamFull},
		{&jetstream.APIError{ErrorCode: 10077, Description: "maximum bytes exceeded"}, natserr.StreamFull},
		{account, natserr.AccountLimit},
		{&jetstream.APIError{ErrorCode: 10047, Description: "insufficient storage resources available"}, natserr.AccountLimit},
		{tooBig, natserr.TooLarge},
		{ioErr, natserr.Other},
		{context.DeadlineExceeded, natserr.Unacknowledged},
		{fmt.Errorf("kvstore: update state: %w", jetstream.ErrNoStreamResponse), natserr.Unacknowledged},
		{errors.New("something else"), natserr.Other},
	} {
		if got := natserr.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}
