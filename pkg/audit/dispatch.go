package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DispatchReport is what the dispatch check found: every message a digest
// vouches for read again and compared.
type DispatchReport struct {
	// Digests is how many digest entries were checked; Checked how many
	// messages were compared with them.
	Digests int `json:"digests"`
	Checked int `json:"checked"`
	// Expired counts messages gone by the stream's retention (older than
	// its max age): not tampering.
	Expired int `json:"expired"`
	// Findings are messages deleted, altered or injected since (or, for
	// injected ones, before) their digest.
	Findings []Finding `json:"findings,omitempty"`
	// Undigested are, per stream, the messages after its last digest, not
	// yet covered by one.
	Undigested []Span `json:"undigested,omitempty"`
}

// Finding is one tampered-with dispatch.
type Finding struct {
	Stream string `json:"stream"`
	Seq    uint64 `json:"seq"`
	// Kind is "deleted" (also gone from the start of the stream before its
	// retention ran out), "altered", "injected", "recreated" (the whole
	// stream) or "forged_digest".
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// Entry is the audit entry (the digest) that vouched for the message.
	Entry uint64 `json:"entry"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s seq %d: %s: %s (digest at audit entry %d)", f.Stream, f.Seq, f.Kind, f.Detail, f.Entry)
}

// Span is a stream's sequence range.
type Span struct {
	Stream string `json:"stream"`
	First  uint64 `json:"first"`
	Last   uint64 `json:"last"`
}

// streamView is a dispatch stream as verifyDispatches sees it now.
type streamView struct {
	s    jetstream.Stream
	info *jetstream.StreamInfo
	// last is the last sequence a digest covered.
	last uint64
	// recreated is set once the stream was reported created anew.
	recreated bool
	// copies are the unrecorded messages that the ledger places at another
	// sequence (a second copy of a dispatched message), by that sequence;
	// paired are the copies reported with their deleted original.
	copies map[uint64]Unrecorded
	paired map[uint64]bool
}

// verifyDispatches checks every digest entry at or after from: a first
// pass over the digests collects the messages published again under a
// dispatched message id (a later digest lists them), so that the second
// can report a deleted original and its copy together.
func verifyDispatches(ctx context.Context, js jetstream.JetStream, trail jetstream.Stream, key []byte, t Trail, from uint64) (DispatchReport, error) {
	var rep DispatchReport
	streams := map[string]*streamView{}
	var order []string
	view := func(name string) (*streamView, error) {
		if v := streams[name]; v != nil {
			return v, nil
		}
		v := &streamView{copies: map[uint64]Unrecorded{}, paired: map[uint64]bool{}}
		s, err := js.Stream(ctx, name)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
		case err != nil:
			return nil, fmt.Errorf("audit: stream %s: %w", name, err)
		default:
			v.s = s
			if v.info, err = s.Info(ctx); err != nil {
				return nil, fmt.Errorf("audit: stream info %s: %w", name, err)
			}
		}
		streams[name] = v
		order = append(order, name)
		return v, nil
	}
	err := eachDigest(ctx, trail, key, t, from, func(_ uint64, d *Digest) error {
		if d == nil {
			return nil
		}
		v, err := view(d.Stream)
		if err != nil {
			return err
		}
		for _, u := range d.Unrecorded {
			if u.LedgerSeq > 0 {
				v.copies[u.LedgerSeq] = u
			}
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	err = eachDigest(ctx, trail, key, t, from, func(entry uint64, d *Digest) error {
		if d == nil {
			rep.Findings = append(rep.Findings, Finding{Kind: "forged_digest", Entry: entry, Detail: "the digest entry is not signed with the key"})
			return nil
		}
		v, err := view(d.Stream)
		if err != nil {
			return err
		}
		rep.Digests++
		if err := checkDigest(ctx, v, entry, *d, &rep); err != nil {
			return err
		}
		v.last = max(v.last, d.Last)
		return nil
	})
	if err != nil {
		return rep, err
	}
	for _, name := range order {
		if v := streams[name]; v.info != nil && v.info.State.LastSeq > v.last {
			rep.Undigested = append(rep.Undigested, Span{Stream: name, First: max(v.last+1, v.info.State.FirstSeq), Last: v.info.State.LastSeq})
		}
	}
	return rep, nil
}

// eachDigest calls fn with every digest entry of the trail at or after
// from, in order; d is nil for an entry not signed with the key.
func eachDigest(ctx context.Context, trail jetstream.Stream, key []byte, t Trail, from uint64, fn func(entry uint64, d *Digest) error) error {
	for seq := max(from, 1); ; seq++ {
		m, err := trail.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(t.Subject+"."+KindDigest+".>"))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: read digests: %w", err)
		}
		seq = m.Sequence
		var e Entry
		var d Digest
		if json.Unmarshal(m.Data, &e) != nil || !e.Valid(key) || json.Unmarshal(e.Detail, &d) != nil {
			err = fn(seq, nil)
		} else {
			err = fn(seq, &d)
		}
		if err != nil {
			return err
		}
	}
}

// checkDigest compares digest d (audit entry entry) with its stream now.
func checkDigest(ctx context.Context, v *streamView, entry uint64, d Digest, rep *DispatchReport) error {
	find := func(seq uint64, kind, format string, args ...any) {
		rep.Findings = append(rep.Findings, Finding{Stream: d.Stream, Seq: seq, Kind: kind, Entry: entry, Detail: fmt.Sprintf(format, args...)})
	}
	if v.info == nil || !v.info.Created.Equal(d.Created) {
		if !v.recreated {
			v.recreated = true
			find(d.First, "recreated", "the stream was deleted (and maybe created anew): the messages digested from sequence %d on are gone", d.First)
		}
		return nil
	}
	// Retention removes the oldest messages first, by age: the range's
	// messages below the stream's first sequence are expired when even its
	// last one is past the max age, removed otherwise (deleted, purged, or
	// the stream's limits lowered). A range across the boundary cannot
	// tell its messages apart and counts them as expired.
	now := time.Now()
	removedBelowFirst := d.MaxAge <= 0 || d.FirstAt.Add(d.MaxAge).After(now)
	h := NewRangeHasher(d.First, d.BlockSize)
	present := map[uint64]*jetstream.RawStreamMsg{}
	var deleted []uint64
	for seq := d.First; seq <= d.Last; seq++ {
		if d.inGap(seq) {
			continue
		}
		if seq < v.info.State.FirstSeq {
			if removedBelowFirst {
				deleted = append(deleted, seq)
			} else {
				rep.Expired++
			}
			continue
		}
		m, err := v.s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			deleted = append(deleted, seq)
			continue
		}
		if err != nil {
			return fmt.Errorf("audit: %s message %d: %w", d.Stream, seq, err)
		}
		present[seq] = m
		h.Add(seq, m.Subject, m.Header.Get(jetstream.MsgIDHeader), m.Data, m.Time)
		rep.Checked++
	}
	var again Digest
	h.Finish(d.Last, &again)
	for _, seq := range deleted {
		if c, ok := v.copies[seq]; ok {
			v.paired[c.Seq] = true
			find(seq, "altered", "deleted and published again at sequence %d with the same Nats-Msg-Id %q: %s",
				c.Seq, c.MsgID, compareCopy(ctx, v, d, present, seq, c))
			continue
		}
		if seq < v.info.State.FirstSeq {
			find(seq, "deleted", "the message is gone before its retention (max age %s) ran out: deleted, purged, or the stream's limits lowered", d.MaxAge)
		} else {
			find(seq, "deleted", "the message is gone (deleted from the stream)")
		}
	}
	for _, u := range d.Unrecorded {
		if !v.paired[u.Seq] {
			find(u.Seq, "injected", "Nats-Msg-Id %q on %s: %s: no scheduler dispatched it", u.MsgID, u.Subject, u.Ledger)
		}
	}
	if d.UnrecordedMore > 0 {
		find(d.Last, "injected", "%d more messages of this range have no ledger entry", d.UnrecordedMore)
	}
	// Blocks with every message still there must hash as digested.
	for i := 0; uint64(i)*uint64(d.BlockSize) <= d.Last-d.First; i++ {
		lo := d.First + uint64(i)*uint64(d.BlockSize)
		hi := min(lo+uint64(d.BlockSize)-1, d.Last)
		if lo < v.info.State.FirstSeq || anyIn(deleted, lo, hi) {
			continue
		}
		if !bytes.Equal(again.block(i), d.block(i)) {
			find(lo, "altered", "a message of sequences %d to %d differs from what was digested (none is missing: altered in the store)", lo, hi)
		}
	}
	return nil
}

// compareCopy says how the copy c of the deleted message at seq differs:
// its block hashes as digested with the copy in the original's place only
// if subject and body are the same.
func compareCopy(ctx context.Context, v *streamView, d Digest, present map[uint64]*jetstream.RawStreamMsg, seq uint64, c Unrecorded) string {
	m, err := v.s.GetMsg(ctx, c.Seq)
	if err != nil {
		return "the copy is gone too"
	}
	i := int((seq - d.First) / uint64(d.BlockSize))
	lo := d.First + uint64(i)*uint64(d.BlockSize)
	hi := min(lo+uint64(d.BlockSize)-1, d.Last)
	h := NewRangeHasher(lo, d.BlockSize)
	for s := lo; s <= hi; s++ {
		switch {
		case s == seq:
			h.Add(s, m.Subject, m.Header.Get(jetstream.MsgIDHeader), m.Data, m.Time)
		case present[s] != nil:
			p := present[s]
			h.Add(s, p.Subject, p.Header.Get(jetstream.MsgIDHeader), p.Data, p.Time)
		}
	}
	var got Digest
	h.Finish(hi, &got)
	if bytes.Equal(got.block(0), d.block(i)) {
		return "an identical copy (same subject and body)"
	}
	return fmt.Sprintf("the copy's subject or body differs from the original (now subject %s, %d body bytes)", m.Subject, len(m.Data))
}

func anyIn(seqs []uint64, lo, hi uint64) bool {
	for _, s := range seqs {
		if s >= lo && s <= hi {
			return true
		}
	}
	return false
}
