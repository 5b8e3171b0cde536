package natserr

import (
	"context"
	"errors"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Refusal is why a publish failed, as the publish error metric's reason
// label and the observer event of an exhaustion episode name it.
type Refusal string

// The refusals. StreamFull and AccountLimit are JetStream out of room:
// retried (never recorded as failed), they pass once room returns.
// Unacknowledged is no answer in time (a slow server, a leader election,
// a store that cannot write: a full disk). TooLarge is permanent (see
// Permanent).
const (
	StreamFull     Refusal = "stream_full"
	AccountLimit   Refusal = "account_limit"
	Unacknowledged Refusal = "unacknowledged"
	TooLarge       Refusal = "too_large"
	Other          Refusal = "other"
)

// Refusals lists every Refusal, for metrics that create their series at 0.
func Refusals() []Refusal {
	return []Refusal{StreamFull, AccountLimit, Unacknowledged, TooLarge, Other}
}

// JetStream's answers when it has no room for a message.
const (
	// 10077 "stream store failed" carries the store's error: "maximum
	// messages exceeded", "maximum bytes exceeded", "maximum messages per
	// subject exceeded" when a DiscardNew stream is at its limits.
	codeStoreFailed = 10077
	// The account's (or the server's) JetStream limits.
	codeAccountResourcesExceeded = 10002 // resource limits exceeded for account
	codeInsufficientResources    = 10023 // insufficient resources
	codeStorageResourcesExceeded = 10047 // insufficient storage resources available
	codeMemoryResourcesExceeded  = 10028 // insufficient memory resources available
)

// Classify tells why a publish failed (err non-nil).
func Classify(err error) Refusal {
	if Permanent(err) {
		return TooLarge
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case codeStoreFailed:
			if strings.Contains(apiErr.Description, "maximum") && strings.Contains(apiErr.Description, "exceeded") {
				return StreamFull
			}
		case codeAccountResourcesExceeded, codeInsufficientResources, codeStorageResourcesExceeded, codeMemoryResourcesExceeded:
			return AccountLimit
		}
		return Other
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) {
		return Unacknowledged
	}
	return Other
}

// Exhausted reports whether a publish failed for want of room: the
// stream at its limits (discard new) or the account at its JetStream
// limits. Such a refusal is transient: it passes once an operator makes
// room.
func Exhausted(err error) bool {
	r := Classify(err)
	return r == StreamFull || r == AccountLimit
}
