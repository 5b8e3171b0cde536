package auditor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/eventfilter"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// monitor is every instance's watch on the trail's head: it remembers the
// newest head it has seen (its own checks and the anchored head) and
// reports a trail that no longer extends it. After a report it remembers
// the trail as it found it, so each rollback is reported once per
// instance; the anchored head stays where it was, so `audit verify` keeps
// failing until an operator deals with it.
type monitor struct {
	a *Auditor

	mu       sync.Mutex
	seen     audit.Head // the newest head this instance saw (zero: none)
	reported map[string]bool
}

func newMonitor(a *Auditor) *monitor {
	return &monitor{a: a, reported: map[string]bool{}}
}

// check compares the trail with the remembered and the anchored head.
func (m *monitor) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	a := m.a
	s, err := a.js.Stream(ctx, a.trail.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		m.mu.Lock()
		seen := m.seen
		m.mu.Unlock()
		if seen.Seq > 0 {
			m.report(&audit.RollbackError{Expected: seen, Reason: "the stream is gone"})
		}
		return
	}
	if err != nil {
		a.log.Debug("audit head check", "err", err)
		return
	}
	info := s.CachedInfo()
	m.mu.Lock()
	seen := m.seen
	m.mu.Unlock()
	if anchored, ok := m.anchored(ctx); ok {
		if err := audit.Extends(ctx, s, info, anchored); err != nil {
			m.report(err)
		} else if seen.Seq == 0 || anchored.Created.Equal(seen.Created) && anchored.Seq > seen.Seq {
			seen = anchored
		}
	}
	if seen.Seq > 0 {
		if err := audit.Extends(ctx, s, info, seen); err != nil {
			m.report(err)
		}
	}
	// Remember the trail as it is now.
	if info.State.Msgs == 0 {
		return
	}
	last, err := s.GetMsg(ctx, info.State.LastSeq)
	if err != nil {
		return
	}
	var e audit.Entry
	if json.Unmarshal(last.Data, &e) != nil {
		return
	}
	m.mu.Lock()
	m.seen = audit.Head{Stream: a.trail.Stream, Created: info.Created.UTC(), Seq: info.State.LastSeq, MAC: e.MAC}
	m.mu.Unlock()
}

// anchored is the newest head anchored in the head bucket and signed with
// the key. The key's last value is usually it; a delete marker or a value
// not signed with the key sends the monitor to the key's history (and a
// forged value is reported).
func (m *monitor) anchored(ctx context.Context) (audit.Head, bool) {
	a := m.a
	s, err := a.js.Stream(ctx, "KV_"+a.trail.HeadBucket)
	if err != nil {
		return audit.Head{}, false
	}
	last, err := s.GetLastMsgForSubject(ctx, "$KV."+a.trail.HeadBucket+"."+a.trail.Stream)
	if err != nil {
		return audit.Head{}, false
	}
	var h audit.Head
	if json.Unmarshal(last.Data, &h) == nil && h.SignedBy(a.cfg.Key) {
		return h, true
	}
	anchors, err := audit.ReadAnchors(ctx, a.js, a.cfg.Key, a.trail)
	if err != nil {
		return audit.Head{}, false
	}
	for _, rev := range anchors.Forged {
		m.report(fmt.Errorf("%w: revision %d of %s in %s", audit.ErrForgedAnchor, rev, a.trail.Stream, a.trail.HeadBucket))
	}
	return anchors.Last()
}

// report logs a rollback at error level, publishes the event
// sched.event.audit_rollback.<stream> and counts it, once per distinct
// finding.
func (m *monitor) report(err error) {
	if !errors.Is(err, audit.ErrRollback) && !errors.Is(err, audit.ErrForgedAnchor) {
		m.a.log.Debug("audit head check", "err", err)
		return
	}
	a := m.a
	// One report per expected head: the reason's details (how far the
	// trail has grown since) change from check to check.
	key := err.Error()
	attrs := []any{"stream", a.trail.Stream, "err", err}
	var rb *audit.RollbackError
	if errors.As(err, &rb) {
		key = "rollback from " + rb.Expected.String()
		attrs = append(attrs, "expected_head", rb.Expected.String(), "expected_created", rb.Expected.Created)
	}
	m.mu.Lock()
	seen := m.reported[key]
	m.reported[key] = true
	m.mu.Unlock()
	if seen {
		return
	}
	a.log.Error("audit trail rolled back", attrs...)
	a.cfg.Observer.AuditRollback()
	a.publishEvent(kvstore.Event{Kind: kvstore.EventAuditRollback, Schedule: a.trail.Stream, Reason: err.Error(),
		Owner: a.cfg.Instance, At: time.Now().UTC()})
}

// publishEvent publishes an observer event on its subject.
func (a *Auditor) publishEvent(ev kvstore.Event) {
	data, _ := json.Marshal(ev)
	if err := a.js.Conn().Publish(a.layout.EventSubject(ev.Kind, eventfilter.SubjectID(ev)), data); err != nil {
		a.log.Warn("publish "+string(ev.Kind)+" event", "err", err)
	}
}
