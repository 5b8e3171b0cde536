package auditlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipeline"
	"github.com/jetsched/jetsched/internal/pipelined"
	"github.com/jetsched/jetsched/pkg/audit"
)

// IntendAll appends one intent per element of ins (the
// kvstore.BatchAuditor the store's batch saves use), in order, each the
// entry Intend would append, but pipelined: the entries are chained onto
// the trail's last entry and onto each other and sent without waiting for
// each acknowledgement. Every entry expects the sequence before it and
// (after the first) that the message there is its predecessor (by a
// Nats-Msg-Id naming the entry's sequence), so that an entry another
// writer appends meanwhile fails every entry after it, never only some:
// those are chained again onto the new last entry. A checkpoint follows
// when the entries reach a multiple of Interval, as Intend's would (one
// that fails is reported, the intents stand). It returns the sequences of
// the entries appended (the first ones, in order) and the error that
// stopped the rest.
func (l *Log) IntendAll(ctx context.Context, ins []jsstore.Intent) ([]uint64, error) {
	seqs, err := l.intendAll(ctx, ins)
	if err != nil {
		what := "schedule.import"
		if len(ins) > 0 {
			what = ins[0].Action
		}
		l.failure(Failure{Action: what, Target: fmt.Sprintf("%d intents", len(ins)), Err: err})
	}
	return seqs, err
}

func (l *Log) intendAll(ctx context.Context, ins []jsstore.Intent) ([]uint64, error) {
	if len(ins) == 0 {
		return nil, nil
	}
	entries := make([]audit.Entry, len(ins))
	for i, in := range ins {
		e, err := l.actionEntry(ctx, in)
		if err != nil {
			return nil, err
		}
		e.Phase = audit.PhaseIntent
		entries[i] = e
	}
	stream, err := l.js.Stream(ctx, l.trail.Stream)
	if err != nil {
		return nil, fmt.Errorf("auditlog: stream %s: %w", l.trail.Stream, err)
	}
	var seqs []uint64
	checkpoint := false
	wait := pipeline.Backoff(ctx)
	for attempt := 0; len(seqs) < len(entries); attempt++ {
		got, crossed, err := l.sendChained(ctx, stream, entries[len(seqs):])
		seqs = append(seqs, got...)
		checkpoint = checkpoint || crossed
		switch {
		case err == nil:
		case !errors.Is(err, errTrailMoved):
			return seqs, err
		case attempt == appendRetries:
			return seqs, fmt.Errorf("auditlog: append: the trail kept moving; gave up after %d attempts", appendRetries+1)
		default:
			select {
			case <-ctx.Done():
				return seqs, fmt.Errorf("auditlog: append: %w", ctx.Err())
			case <-time.After(wait.NextBackOff()):
			}
		}
	}
	if checkpoint {
		if _, err := l.Checkpoint(ctx); err != nil {
			l.failure(Failure{Action: "checkpoint", Target: l.trail.Stream, Err: err})
		}
	}
	return seqs, nil
}

// sendChained chains entries onto the trail's last entry, sends them all
// and waits for their acknowledgements. It returns how many were
// appended (their sequences), whether one landed on a multiple of
// Interval, and errTrailMoved when another writer's entry made the rest
// fail.
func (l *Log) sendChained(ctx context.Context, stream jetstream.Stream, entries []audit.Entry) ([]uint64, bool, error) {
	info, prev, err := lastEntry(ctx, stream)
	if err != nil {
		return nil, false, err
	}
	subject := l.trail.Subject + "." + audit.KindAction
	last := info.State.LastSeq
	futures := make([]jetstream.PubAckFuture, 0, len(entries))
	var sendErr error
	for i := range entries {
		e := entries[i]
		e.At, e.Prev = time.Now().UTC(), prev
		e.By = l.by
		e = e.Sign(l.key)
		data, _ := json.Marshal(e)
		seq := last + uint64(i)
		m := nats.NewMsg(subject)
		m.Data = data
		m.Header.Set(jetstream.MsgIDHeader, chainID(seq+1))
		m.Header.Set(jetstream.ExpectedLastSeqHeader, strconv.FormatUint(seq, 10))
		if i > 0 {
			m.Header.Set(jetstream.ExpectedLastMsgIDHeader, chainID(seq))
		}
		f, err := pipelined.Publish(ctx, l.js, m)
		if err != nil {
			sendErr = fmt.Errorf("auditlog: append: %w", err)
			break
		}
		futures = append(futures, f)
		prev = e.MAC
	}
	var appended []uint64
	crossed := false
	var ackErr error
	for _, f := range futures {
		select {
		case ack := <-f.Ok():
			if ackErr == nil {
				appended = append(appended, ack.Sequence)
				crossed = crossed || ack.Sequence%Interval == 0
			}
		case err := <-f.Err():
			if ackErr == nil {
				ackErr = err
			}
		case <-ctx.Done():
			return appended, crossed, fmt.Errorf("auditlog: append: %w", ctx.Err())
		}
	}
	switch {
	case ackErr != nil && (natserr.WrongLastSequence(ackErr) || isLastMsgIDMismatch(ackErr)):
		return appended, crossed, errTrailMoved
	case ackErr != nil:
		return appended, crossed, fmt.Errorf("auditlog: append: %w", ackErr)
	}
	return appended, crossed, sendErr
}

// chainID is the Nats-Msg-Id of the entry RecordWrites sends to be the
// trail's entry seq: the next entry expects it as the last message id.
func chainID(seq uint64) string { return "audit." + strconv.FormatUint(seq, 10) }

// codeWrongLastMsgID is JetStream's refusal of a Nats-Expected-Last-Msg-Id
// that is not the stream's last message's (nats.go names no constant).
const codeWrongLastMsgID = 10070

// isLastMsgIDMismatch reports a refused Nats-Expected-Last-Msg-Id.
func isLastMsgIDMismatch(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == codeWrongLastMsgID
}
