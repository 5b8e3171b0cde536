package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// VerifyOptions say what Verify checks.
type VerifyOptions struct {
	// Trail is the trail to verify. Zero value: the default trail.
	Trail Trail
	// From is where the chain walk starts; 0: at the last checkpoint.
	From uint64
	// ExpectHead is a head kept outside NATS (`--expect-head SEQ:MAC`):
	// the trail must still hold that entry with that MAC.
	ExpectHead *Head
	// Dispatches re-reads the fire and wakeup messages every dispatch
	// digest at or after From covers (from the start when From is 0).
	Dispatches bool
	// Revisions reads the latest revision of every key of Buckets and
	// checks that its Sched-Audit-Seq header names its intent.
	Revisions bool
	// Buckets are the buckets Revisions reads; default sched_specs,
	// sched_calendars and sched_wakeups.
	Buckets []string
}

// Report is what Verify found.
type Report struct {
	From    uint64 `json:"from"` // the sequences walked
	To      uint64 `json:"to"`
	Entries int    `json:"entries"`
	// Broken names the first broken link ("" when the chain holds).
	Broken string `json:"broken"`
	// BrokenSeq is its stream sequence.
	BrokenSeq uint64 `json:"broken_seq"`
	// Head is the trail's last entry now (its stream's creation time, its
	// sequence and MAC).
	Head Head `json:"head"`
	// Anchored is the newest head anchored in the head bucket, when there
	// is one; ForgedAnchors are head bucket revisions not signed with the
	// key.
	Anchored      *Head    `json:"anchored,omitempty"`
	ForgedAnchors []uint64 `json:"forged_anchors,omitempty"`
	// Rollback says how the trail fails to extend the anchored head or
	// ExpectHead ("" when it extends both).
	Rollback string `json:"rollback,omitempty"`
	// External lists the external entries walked: changes written straight
	// into the buckets.
	External []ExternalChange `json:"external,omitempty"`
	// Dispatches is the dispatch check, with VerifyOptions.Dispatches.
	Dispatches *DispatchReport `json:"dispatches,omitempty"`
	// Revisions is the revision check, with VerifyOptions.Revisions.
	Revisions *RevisionReport `json:"revisions,omitempty"`
}

// ExternalChange is an external change and the entry that records it.
type ExternalChange struct {
	Entry uint64 `json:"entry"`
	Change
}

// Intact reports whether nothing was found broken, rolled back or
// tampered with (external changes are records, not damage).
func (r Report) Intact() bool {
	return r.Broken == "" && r.Rollback == "" && len(r.ForgedAnchors) == 0 &&
		(r.Dispatches == nil || len(r.Dispatches.Findings) == 0) &&
		(r.Revisions == nil || len(r.Revisions.Forged) == 0)
}

// Verify walks the trail from the last checkpoint (or From) to the end and
// reports the first broken link: an entry whose MAC does not match (forged
// or altered), whose Prev is not the MAC before it (inserted or
// reordered), or a missing sequence (deleted). It checks that the trail
// extends the head anchored in the head bucket and ExpectHead (a trail
// deleted and recreated, cut back or replaced does not), lists the
// external changes it walks past, and with Dispatches re-reads the
// dispatches the digests vouch for.
func Verify(ctx context.Context, js jetstream.JetStream, key []byte, o VerifyOptions) (Report, error) {
	t := o.Trail.WithDefaults()
	s, err := js.Stream(ctx, t.Stream)
	if err != nil {
		return Report{}, fmt.Errorf("audit: stream %s: %w", t.Stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("audit: stream info %s: %w", t.Stream, err)
	}
	r := Report{To: info.State.LastSeq, Head: Head{Stream: t.Stream, Created: info.Created.UTC(), Seq: info.State.LastSeq}}
	if err := checkHeads(ctx, js, s, info, key, t, o.ExpectHead, &r); err != nil {
		return r, err
	}
	if info.State.Msgs == 0 {
		return r, nil
	}
	if err := walk(ctx, s, info, key, t, o.From, &r); err != nil {
		return r, err
	}
	if o.Dispatches {
		d, err := verifyDispatches(ctx, js, s, key, t, o.From)
		if err != nil {
			return r, err
		}
		r.Dispatches = &d
	}
	if o.Revisions {
		rv, err := verifyRevisions(ctx, js, s, key, o.Buckets)
		if err != nil {
			return r, err
		}
		r.Revisions = &rv
	}
	return r, nil
}

// checkHeads compares the trail with its anchored head and the expected
// one.
func checkHeads(ctx context.Context, js jetstream.JetStream, s jetstream.Stream, info *jetstream.StreamInfo, key []byte, t Trail, expect *Head, r *Report) error {
	if info.State.Msgs > 0 {
		last, err := ReadEntry(ctx, s, info.State.LastSeq)
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return err
		}
		r.Head.MAC = last.MAC
	}
	anchors, err := ReadAnchors(ctx, js, key, t)
	if err != nil {
		return err
	}
	r.ForgedAnchors = anchors.Forged
	var reasons []string
	check := func(what string, h Head) error {
		err := Extends(ctx, s, info, h)
		var rb *RollbackError
		switch {
		case errors.As(err, &rb):
			created := ""
			if !h.Created.IsZero() {
				created = " (stream created " + h.Created.Format(time.RFC3339Nano) + ")"
			}
			reasons = append(reasons, fmt.Sprintf("the trail does not extend %s %s%s: %s", what, h, created, rb.Reason))
		case err != nil:
			return err
		}
		return nil
	}
	if h, ok := anchors.Last(); ok {
		r.Anchored = &h
		// Every head anchored must still hold, the newest first: an older
		// one failing while the newest holds means the newest was anchored
		// on a trail that had been rolled back (its predecessor hidden).
		for i := len(anchors.Heads) - 1; i >= 0; i-- {
			n := len(reasons)
			if err := check("its anchored head", anchors.Heads[i]); err != nil {
				return err
			}
			if len(reasons) > n {
				break
			}
		}
	} else if info.State.FirstSeq > 1 {
		reasons = append(reasons, fmt.Sprintf("entries 1 to %d are gone (the stream starts at %d)", info.State.FirstSeq-1, info.State.FirstSeq))
	}
	if expect != nil {
		h := *expect
		h.Stream = t.Stream
		if err := check("the expected head", h); err != nil {
			return err
		}
	}
	for i, reason := range reasons {
		if i > 0 {
			r.Rollback += "; "
		}
		r.Rollback += reason
	}
	return nil
}

// walk checks the chain from the last checkpoint (or from) to the end.
func walk(ctx context.Context, s jetstream.Stream, info *jetstream.StreamInfo, key []byte, t Trail, from uint64, r *Report) error {
	start := from
	if start == 0 {
		start = lastCheckpoint(ctx, s, t, info.State.FirstSeq, info.State.LastSeq)
	}
	start = max(start, info.State.FirstSeq)
	r.From = start
	prevMAC := ""
	if start > info.State.FirstSeq {
		e, err := ReadEntry(ctx, s, start-1)
		if err != nil {
			r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d (before the starting point) is missing: deleted", start-1), start-1
			return nil
		}
		prevMAC = e.MAC
	}
	for seq := start; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d is missing: deleted from the trail", seq), seq
				return nil
			}
			return fmt.Errorf("audit: entry %d: %w", seq, err)
		}
		var e Entry
		if err := json.Unmarshal(m.Data, &e); err != nil {
			r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d is not an audit entry: forged", seq), seq
			return nil
		}
		switch {
		case e.Prev != prevMAC:
			r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d does not follow entry %d (its prev is not that entry's MAC): inserted, reordered, or an entry before it was removed", seq, seq-1), seq
			return nil
		case !e.Valid(key):
			r.Broken, r.BrokenSeq = fmt.Sprintf("entry %d (%s %s by %s) has a wrong MAC: forged or altered", seq, e.Action, e.Target, e.Actor), seq
			return nil
		}
		if e.Kind == KindExternal {
			var x External
			if json.Unmarshal(e.Detail, &x) == nil {
				for _, c := range x.Changes {
					r.External = append(r.External, ExternalChange{Entry: seq, Change: c})
				}
			}
		}
		prevMAC = e.MAC
		r.Entries++
	}
	return nil
}

// lastCheckpoint finds the newest checkpoint entry's covered sequence (the
// first sequence when there is none).
func lastCheckpoint(ctx context.Context, s jetstream.Stream, t Trail, first, last uint64) uint64 {
	m, err := s.GetLastMsgForSubject(ctx, t.Subject+"."+KindCheckpoint)
	if err != nil {
		return first
	}
	var e Entry
	if json.Unmarshal(m.Data, &e) != nil || e.Covers < first || e.Covers >= m.Sequence || m.Sequence > last {
		return first
	}
	// The walk includes the checkpoint itself, so a forged one is caught.
	return e.Covers
}
