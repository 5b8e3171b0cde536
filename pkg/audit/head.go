package audit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Head is the trail's head at a checkpoint: the checkpoint's sequence and
// MAC, and the creation time of the stream it is in. Every checkpoint's
// head is also written, signed, to the key "<stream>" of the head bucket
// (history kept), outside the stream: a trail deleted and recreated, or cut
// back, no longer extends the head anchored there.
type Head struct {
	Stream  string    `json:"stream"`
	Created time.Time `json:"created"`
	Seq     uint64    `json:"seq"`
	MAC     string    `json:"mac"`
	At      time.Time `json:"at"`
	By      string    `json:"by,omitempty"`
	// Sig is HMAC-SHA256(key, the head without Sig), hex: an anchor only a
	// key holder can write.
	Sig string `json:"sig"`
}

// String is the head as --expect-head takes it: "SEQ:MAC".
func (h Head) String() string { return strconv.FormatUint(h.Seq, 10) + ":" + h.MAC }

func (h Head) sign(key []byte) string {
	h.Sig = ""
	body, _ := json.Marshal(h)
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Sign returns h signed with key (Sig set), as a writer anchors it.
func (h Head) Sign(key []byte) Head {
	h.Sig = h.sign(key)
	return h
}

// SignedBy reports whether h's signature is right for key.
func (h Head) SignedBy(key []byte) bool { return hmac.Equal([]byte(h.Sig), []byte(h.sign(key))) }

// ParseHead reads "SEQ:MAC" (what Verify prints as the head).
func ParseHead(s string) (Head, error) {
	seqText, macText, ok := strings.Cut(s, ":")
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if !ok || err != nil || seq == 0 {
		return Head{}, fmt.Errorf("audit: head %q: want SEQ:MAC (a sequence above 0, a colon, the entry's MAC)", s)
	}
	if _, err := hex.DecodeString(macText); err != nil || len(macText) != 64 {
		return Head{}, fmt.Errorf("audit: head %q: the MAC must be 64 hex digits", s)
	}
	return Head{Seq: seq, MAC: macText}, nil
}

// RollbackError says the trail does not extend a head it had: it was
// deleted and recreated, cut back, or its entries replaced.
type RollbackError struct {
	// Expected is the head the trail should extend.
	Expected Head
	// Reason says what was found instead.
	Reason string
}

func (e *RollbackError) Error() string {
	created := ""
	if !e.Expected.Created.IsZero() {
		created = " (stream created " + e.Expected.Created.Format(time.RFC3339Nano) + ")"
	}
	return fmt.Sprintf("audit: trail %s rolled back: expected head %s%s: %s", e.Expected.Stream, e.Expected, created, e.Reason)
}

// ErrForgedAnchor: a value in the head bucket is not a head signed with
// the trail's key.
var ErrForgedAnchor = errors.New("audit: anchored head not signed with the key: forged")

// ErrRollback matches every *RollbackError (errors.Is).
var ErrRollback = errors.New("audit: trail rolled back")

// Is makes a RollbackError match ErrRollback.
func (e *RollbackError) Is(target error) bool { return target == ErrRollback }

// Extends checks that the trail, as info describes its stream, still
// holds head h: the same stream (creation time), nothing removed from its
// start, and the entry at h.Seq with h's MAC. A *RollbackError says what
// differs.
func Extends(ctx context.Context, s jetstream.Stream, info *jetstream.StreamInfo, h Head) error {
	fail := func(format string, args ...any) error {
		return &RollbackError{Expected: h, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case !h.Created.IsZero() && !info.Created.Equal(h.Created):
		return fail("the stream was created anew at %s", info.Created.Format(time.RFC3339Nano))
	case info.State.LastSeq < h.Seq:
		return fail("the stream ends at sequence %d, before the head", info.State.LastSeq)
	case info.State.FirstSeq > 1:
		return fail("entries 1 to %d are gone (the stream starts at %d: its limits were lowered or it was purged)", info.State.FirstSeq-1, info.State.FirstSeq)
	}
	e, err := ReadEntry(ctx, s, h.Seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return fail("entry %d is gone", h.Seq)
	}
	if err != nil {
		return err
	}
	if e.MAC != h.MAC {
		return fail("entry %d has MAC %s: it was replaced", h.Seq, e.MAC)
	}
	return nil
}

// decodeAnchor decodes an anchored head and checks its signature.
func decodeAnchor(key, data []byte) (Head, bool) {
	var h Head
	if json.Unmarshal(data, &h) != nil || h.Seq == 0 {
		return Head{}, false
	}
	return h, h.SignedBy(key)
}

// Anchors are the heads anchored for a trail, oldest first, read from the
// head bucket's stream by sequence (a stream read: nothing but STREAM.INFO
// and STREAM.MSG.GET on it is needed). Forged lists the bucket revisions
// whose value is not a head signed with the key.
type Anchors struct {
	Heads  []Head
	Forged []uint64
}

// Last is the newest signed head (false when there is none).
func (a Anchors) Last() (Head, bool) {
	if len(a.Heads) == 0 {
		return Head{}, false
	}
	return a.Heads[len(a.Heads)-1], true
}

// ReadAnchors reads the heads anchored for trail t. A missing head bucket
// is no anchors.
func ReadAnchors(ctx context.Context, js jetstream.JetStream, key []byte, t Trail) (Anchors, error) {
	t = t.WithDefaults()
	var a Anchors
	s, err := js.Stream(ctx, "KV_"+t.HeadBucket)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return a, nil
	}
	if err != nil {
		return a, fmt.Errorf("audit: head bucket %s: %w", t.HeadBucket, err)
	}
	subject := "$KV." + t.HeadBucket + "." + t.Stream
	for seq := uint64(1); ; seq++ {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return a, nil
		}
		if err != nil {
			return a, fmt.Errorf("audit: read anchored heads: %w", err)
		}
		seq = m.Sequence
		if len(m.Data) == 0 {
			continue // a delete marker: history keeps what it hid
		}
		if h, ok := decodeAnchor(key, m.Data); ok {
			a.Heads = append(a.Heads, h)
		} else {
			a.Forged = append(a.Forged, m.Sequence)
		}
	}
}
