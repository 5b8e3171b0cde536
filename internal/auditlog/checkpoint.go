package auditlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/nats-io/nats.go/jetstream"
)

// Checkpoint appends a checkpoint covering the trail's last entry and
// anchors its head in the head bucket. It returns the anchored head; a
// trail that does not extend the head anchored before is reported (the
// Log's rollback handler) and not anchored, and Checkpoint returns the
// *audit.RollbackError.
func (l *Log) Checkpoint(ctx context.Context) (audit.Head, error) {
	stream, err := l.js.Stream(ctx, l.trail.Stream)
	if err != nil {
		return audit.Head{}, fmt.Errorf("auditlog: stream %s: %w", l.trail.Stream, err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return audit.Head{}, fmt.Errorf("auditlog: stream info: %w", err)
	}
	seq, info, err := l.append(ctx, audit.Entry{Kind: audit.KindCheckpoint, Action: "checkpoint", Covers: info.State.LastSeq})
	if err != nil {
		return audit.Head{}, err
	}
	e, err := audit.ReadEntry(ctx, stream, seq)
	if err != nil {
		return audit.Head{}, err
	}
	h := audit.Head{Stream: l.trail.Stream, Created: info.Created.UTC(), Seq: seq, MAC: e.MAC, At: time.Now().UTC(), By: l.by}
	h = h.Sign(l.key)
	if err := l.anchor(ctx, stream, h); err != nil {
		if errors.Is(err, audit.ErrRollback) {
			l.rollback(err)
		}
		return audit.Head{}, err
	}
	return h, nil
}

// anchor writes h to the head bucket if the trail extends the newest
// head anchored there (read from the key's history, so that a delete
// marker cannot hide it), by compare-and-swap on the key's last sequence.
func (l *Log) anchor(ctx context.Context, stream jetstream.Stream, h audit.Head) error {
	hs, err := l.js.Stream(ctx, "KV_"+l.trail.HeadBucket)
	if err != nil {
		return fmt.Errorf("auditlog: head bucket %s: %w", l.trail.HeadBucket, err)
	}
	// The key's subject in the stream, and the one a write to it is
	// published on (behind the context's domain or API prefix).
	subject := "$KV." + l.trail.HeadBucket + "." + h.Stream
	put := jsname.KV(l.js, l.trail.HeadBucket, h.Stream)
	data, _ := json.Marshal(h)
	for range 20 {
		anchors, err := audit.ReadAnchors(ctx, l.js, l.key, l.trail)
		if err != nil {
			return err
		}
		if old, ok := anchors.Last(); ok {
			if old.Seq >= h.Seq && old.Created.Equal(h.Created) {
				return nil // a newer head is anchored already
			}
			info, err := stream.Info(ctx)
			if err != nil {
				return fmt.Errorf("auditlog: stream info: %w", err)
			}
			if err := audit.Extends(ctx, stream, info, old); err != nil {
				return err
			}
		}
		var last uint64
		m, err := hs.GetLastMsgForSubject(ctx, subject)
		switch {
		case err == nil:
			last = m.Sequence
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			return fmt.Errorf("auditlog: read anchored head: %w", err)
		}
		_, err = l.js.Publish(ctx, put, data, jetstream.WithExpectLastSequencePerSubject(last))
		if err == nil {
			return nil
		}
		if !natserr.WrongLastSequence(err) {
			return fmt.Errorf("auditlog: anchor head %s: %w", h, err)
		}
	}
	return fmt.Errorf("auditlog: anchor head %s: the anchor kept changing; gave up", h)
}
