// Package natserr classifies the errors NATS and JetStream return, so that
// the engines branch on what an error means (retry, give up, re-read)
// rather than on its text.
package natserr

import (
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStream refuses these messages whatever the retries: they are too large
// for the server, the stream or the header limit.
const (
	codeMessageTooLarge = 10054 // message size exceeds maximum allowed
	codeHeaderTooLarge  = 10097 // header size exceeds maximum allowed of 64k
)

// Permanent reports whether a publish error is the message's own fault, so
// that publishing it again can never succeed. Anything else (a timeout, no
// responders while a stream leader is elected, a missing stream an operator
// may recreate) may pass and is worth retrying.
func Permanent(err error) bool {
	if errors.Is(err, nats.ErrMaxPayload) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == codeMessageTooLarge || apiErr.ErrorCode == codeHeaderTooLarge)
}

// WrongLastSequence reports JetStream's "wrong last sequence", the answer
// to a conditional write that lost: 10071, or 10164 from a replicated
// stream.
func WrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
