package auditor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// maxUnrecorded bounds the unrecorded messages one digest lists.
const maxUnrecorded = 100

// digestBlock is the block size of new digests, in sequences.
const digestBlock = 64

// Bounds of one digest entry and of one round's reading per stream: a
// round stays short and a digest entry small (an 8-byte hash per 64
// messages); a backlog is caught up over the next rounds.
const (
	maxPerDigest = 50_000
	maxPerRound  = 200_000
	ledgerBatch  = 256
)

// digestFetchWait bounds a digest fetch's wait for messages counted as
// pending but gone before it (removed by a stream limit meanwhile).
const digestFetchWait = time.Second

// digestStream digests the messages of stream name since its last digest,
// up to the last one older than Settle.
func (a *Auditor) digestStream(ctx context.Context, name string) error {
	s, err := a.js.Stream(ctx, name)
	if err != nil {
		return err
	}
	info := s.CachedInfo()
	next := a.nextDigest(ctx, name, info)
	if next > info.State.LastSeq {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: next, InactiveThreshold: time.Minute,
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	d := newDigester(a, info, next)
	cutoff := time.Now().Add(-a.cfg.Settle)
	read, done := 0, false
	// pending is how many messages the consumer has left (the stream may
	// have gaps: a fetch of more than that would wait out its expiry).
	var pending uint64
	if ci := cons.CachedInfo(); ci != nil {
		pending = ci.NumPending
	}
	limit := jsstore.PullBytes(a.js.Conn())
	for !done && read < maxPerRound && pending > 0 {
		// The messages up to the last sequence are there: a fetch ends at
		// its count, or at its byte limit (fires carry inputs of up to
		// 256 KiB: 500 of them at once would be past the server's limit of
		// pending bytes for the connection). Every batch is read to its
		// end, so that no fetch is left waiting.
		want := min(500, info.State.LastSeq-max(d.last+1, next)+1, pending)
		batch, err := cons.Fetch(int(max(want, 1)), jetstream.FetchMaxBytes(limit), jetstream.FetchMaxWait(digestFetchWait))
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			if done {
				continue
			}
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			seq := md.Sequence.Stream
			pending = md.NumPending
			if seq > info.State.LastSeq || md.Timestamp.After(cutoff) {
				done = true // the rest is newer than this round looks at
				if err := d.flush(ctx, seq-1); err != nil {
					return err
				}
				continue
			}
			if err := d.add(ctx, seq, m, md.Timestamp); err != nil {
				return err
			}
			read++
			if md.NumPending == 0 || seq == info.State.LastSeq {
				done = true
				if err := d.flush(ctx, info.State.LastSeq); err != nil {
					return err
				}
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if got == 0 {
			break
		}
	}
	return d.flush(ctx, d.last)
}

// nextDigest is the first sequence of stream name not yet digested: after
// the last digest in the trail (or this instance's own, if later), or the
// stream's first sequence when there is none or the stream was created
// anew since.
func (a *Auditor) nextDigest(ctx context.Context, name string, info *jetstream.StreamInfo) uint64 {
	next := a.cursors[name]
	trail, err := a.js.Stream(ctx, a.trail.Stream)
	if err == nil {
		if m, err := trail.GetLastMsgForSubject(ctx, a.trail.Subject+"."+audit.KindDigest+"."+name); err == nil {
			var e audit.Entry
			var d audit.Digest
			switch {
			case json.Unmarshal(m.Data, &e) != nil || !e.Valid(a.cfg.Key) || json.Unmarshal(e.Detail, &d) != nil:
				a.log.Error("the trail's last digest entry is not signed with the key: digesting on from this instance's own", "entry", m.Sequence, "stream", name)
			case d.Created.Equal(info.Created):
				next = max(next, d.Last+1)
			}
		}
	}
	return max(next, info.State.FirstSeq, 1)
}

// digester builds the digest entries of one round of one stream.
type digester struct {
	a       *Auditor
	stream  string
	info    *jetstream.StreamInfo
	tickTTL time.Duration

	first, last uint64 // the entry being built: from first; last added
	h           *audit.RangeHasher
	pending     []pendingMsg // messages waiting for their ledger check
	unrecorded  []audit.Unrecorded
	more        int
}

type pendingMsg struct {
	seq            uint64
	subject, msgID string
	at             time.Time
}

func newDigester(a *Auditor, info *jetstream.StreamInfo, first uint64) *digester {
	d := &digester{a: a, stream: info.Config.Name, info: info, first: first, last: first - 1, h: audit.NewRangeHasher(first, digestBlock)}
	if st, err := a.cfg.Store.JetStream().Stream(context.Background(), "KV_"+a.layout.TicksBucket); err == nil {
		d.tickTTL = st.CachedInfo().Config.MaxAge
	}
	return d
}

// add hashes the message at seq and queues its ledger check.
func (d *digester) add(ctx context.Context, seq uint64, m jetstream.Msg, at time.Time) error {
	id := m.Headers().Get(jetstream.MsgIDHeader)
	d.h.Add(seq, m.Subject(), id, m.Data(), at)
	d.last = seq
	if sig := m.Headers().Get(audit.SignatureHeader); sig != "" {
		// A scheduler's fire carries its signature: the stream is its
		// ledger, and the signature is what tells it from an injected one.
		if !audit.FireSigned(d.a.cfg.Key, sig, m.Subject(), id, m.Headers().Get(kvstore.HeaderScheduledAt), m.Data()) {
			d.unrecord(audit.Unrecorded{Seq: seq, Subject: m.Subject(), MsgID: id, Ledger: "its Sched-Signature is not the audit key's"})
		}
	} else {
		d.pending = append(d.pending, pendingMsg{seq: seq, subject: m.Subject(), msgID: id, at: at})
	}
	if len(d.pending) >= ledgerBatch {
		if err := d.checkLedger(ctx); err != nil {
			return err
		}
	}
	if d.h.Count() >= maxPerDigest {
		return d.flush(ctx, seq)
	}
	return nil
}

// checkLedger looks the pending messages (those without a signature: a
// scheduler's fire is signed) up in the ledger (one direct get for the
// batch): a message no tick dispatched, or whose tick names another
// sequence, is unrecorded: a wakeup without its tick, a fire of a
// scheduler from before signed fires without its tick, or an injected
// message. Messages older than the ledger's
// retention cannot be checked and are not.
func (d *digester) checkLedger(ctx context.Context) error {
	if len(d.pending) == 0 {
		return nil
	}
	prefix := "$KV." + d.a.layout.TicksBucket + "."
	var subjects []string
	for _, p := range d.pending {
		if p.msgID != "" {
			subjects = append(subjects, prefix+p.msgID)
		}
	}
	ticks, err := lastPerSubject(ctx, d.a.js, "KV_"+d.a.layout.TicksBucket, subjects)
	if err != nil {
		return fmt.Errorf("ledger check: %w", err)
	}
	for _, p := range d.pending {
		if d.tickTTL > 0 && time.Since(p.at) > d.tickTTL-time.Minute {
			continue // its tick may have expired
		}
		u := audit.Unrecorded{Seq: p.seq, Subject: p.subject, MsgID: p.msgID}
		data, ok := ticks[prefix+p.msgID]
		switch {
		case p.msgID == "":
			u.Ledger = "no Nats-Msg-Id"
		case !ok:
			u.Ledger = "no entry"
		default:
			t, err := kvstore.DecodeTick(data)
			if err == nil && (t.Seq == 0 || t.Seq == p.seq && (t.Stream == "" || t.Stream == d.stream)) {
				continue
			}
			u.Ledger, u.LedgerSeq = fmt.Sprintf("the entry points at sequence %d", t.Seq), t.Seq
		}
		d.unrecord(u)
	}
	d.pending = d.pending[:0]
	return nil
}

// unrecord notes a message no scheduler dispatched.
func (d *digester) unrecord(u audit.Unrecorded) {
	if len(d.unrecorded) < maxUnrecorded {
		d.unrecorded = append(d.unrecorded, u)
	} else {
		d.more++
	}
}

// flush writes the digest entry of the range up to last (when it holds
// anything) and starts the next one after it.
func (d *digester) flush(ctx context.Context, last uint64) error {
	if last < d.first {
		return nil
	}
	if err := d.checkLedger(ctx); err != nil {
		return err
	}
	dg := audit.Digest{Stream: d.stream, Created: d.info.Created.UTC(), MaxAge: d.info.Config.MaxAge,
		Unrecorded: d.unrecorded, UnrecordedMore: d.more}
	d.h.Finish(last, &dg)
	detail, err := json.Marshal(dg)
	if err != nil {
		return err
	}
	if _, err := d.a.cfg.Log.Append(ctx, audit.Entry{Kind: audit.KindDigest, Action: "dispatch.digest", Target: d.stream, Detail: detail}); err != nil {
		return err
	}
	if len(dg.Unrecorded) > 0 {
		d.a.log.Error("dispatched messages no scheduler recorded (injected?)", "stream", d.stream, "count", len(dg.Unrecorded)+dg.UnrecordedMore,
			"first_seq", dg.Unrecorded[0].Seq, "msg_id", dg.Unrecorded[0].MsgID, "ledger", dg.Unrecorded[0].Ledger)
	}
	d.a.cursors[d.stream] = last + 1
	d.first, d.last = last+1, last
	d.h = audit.NewRangeHasher(last+1, digestBlock)
	d.unrecorded, d.more = nil, 0
	return nil
}
