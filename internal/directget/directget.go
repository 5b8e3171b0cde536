// Package directget reads the last message of many subjects of a stream
// in one request: a direct get with "multi_last" (ADR-31, nats-server
// 2.11+), answered by any replica of a stream with direct gets on.
package directget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsname"
)

// ErrTooMany: the subjects match more messages than one answer holds (the
// server sends at most 1,024, and stops at its pending-bytes limit): ask
// for fewer at a time.
var ErrTooMany = errors.New("directget: more messages than one answer holds")

// ErrNoDirect: nothing answers direct gets on the stream (off in its
// configuration, or no such stream).
var ErrNoDirect = errors.New("directget: the stream does not answer direct gets")

// Timeout bounds the wait for a whole answer.
const Timeout = 10 * time.Second

// Statuses of a direct get's answer.
const (
	statusEndOfBatch = "204"
	statusNotFound   = "404"
	statusTooMany    = "413"
	statusNoResponse = "503"
)

// answerRoom holds the most messages one answer has (the server's 1,024,
// its end-of-batch status and a spare).
const answerRoom = 1024 + 2

// headerNumPending is, in the end-of-batch status, how many messages the
// answer left out.
const headerNumPending = "Nats-Num-Pending"

// LastPerSubject sends one direct get of the last message of every
// subject of stream that matches one of subjects (filters: wildcards
// allowed) and calls fn with each message of the answer, in the order the
// server sends them (by sequence). Each carries the headers the server
// adds (jetstream.SubjectHeader, SequenceHeader, TimeStampHeaer) besides
// its own. No subject matching is not an error: fn is not called.
func LastPerSubject(ctx context.Context, js jetstream.JetStream, stream string, subjects []string, fn func(*nats.Msg)) error {
	if len(subjects) == 0 {
		return nil
	}
	body, err := json.Marshal(struct {
		MultiLast []string `json:"multi_last"`
	}{subjects})
	if err != nil {
		return fmt.Errorf("directget %s: %w", stream, err)
	}
	nc := js.Conn()
	inbox := nc.NewInbox() // the connection's inbox prefix: what a least-privilege user may subscribe to
	// A channel that holds a whole answer (SubscribeSync's holds 65,536
	// messages: 512 KB made and dropped per call, one per shard at each
	// tenure's window check).
	ch := make(chan *nats.Msg, answerRoom)
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return fmt.Errorf("directget %s: %w", stream, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(jsname.API(js, "DIRECT.GET."+stream), inbox, body); err != nil {
		return fmt.Errorf("directget %s: %w", stream, err)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	for {
		var m *nats.Msg
		select {
		case m = <-ch:
		case <-ctx.Done():
			return fmt.Errorf("directget %s: %w", stream, ctx.Err())
		}
		switch status := m.Header.Get("Status"); status {
		case "":
			fn(m)
		case statusEndOfBatch:
			if pending := m.Header.Get(headerNumPending); pending != "" && pending != "0" {
				return fmt.Errorf("directget %s: %w (%s left out)", stream, ErrTooMany, pending)
			}
			return nil
		case statusNotFound:
			return nil
		case statusTooMany:
			return fmt.Errorf("directget %s: %w", stream, ErrTooMany)
		case statusNoResponse:
			return fmt.Errorf("directget %s: %w", stream, ErrNoDirect)
		default:
			return fmt.Errorf("directget %s: status %s %s", stream, status, m.Header.Get("Description"))
		}
	}
}
