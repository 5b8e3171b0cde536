package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"time"
)

// Digest is the detail of a dispatch digest entry: it vouches for the
// messages of one stream (SCHED_FIRES or SCHED_WAKEUPS) in the sequence
// range First to Last as they were when the digest was written. Verify
// reads the range again and names every message deleted, altered or
// injected since.
type Digest struct {
	Stream string `json:"stream"`
	// Created is the stream's creation time.
	Created time.Time `json:"created"`
	// MaxAge is the stream's retention when digested: a message older than
	// this may be gone without tampering.
	MaxAge time.Duration `json:"max_age"`
	First  uint64        `json:"first"`
	Last   uint64        `json:"last"`
	// Count is how many messages the range held.
	Count int `json:"count"`
	// FirstAt and LastAt are the stream times of its first and last
	// message.
	FirstAt time.Time `json:"first_at,omitzero"`
	LastAt  time.Time `json:"last_at,omitzero"`
	// SHA256 is the hash over every message of the range (messageHash's
	// input for each, in sequence order), hex.
	SHA256 string `json:"sha256"`
	// BlockSize and Blocks: the range cut into blocks of BlockSize
	// sequences from First, and for each block the first 8 bytes of the
	// SHA-256 over its messages, so that a difference is narrowed to a
	// block (and a missing message to its sequence) without a hash per
	// message.
	BlockSize int    `json:"block_size"`
	Blocks    []byte `json:"blocks"`
	// Gaps are the sequences of the range that held no message when it was
	// digested (deleted before the digest), as [from, to] pairs.
	Gaps [][2]uint64 `json:"gaps,omitempty"`
	// Unrecorded are messages with no ledger entry that dispatched them:
	// injected by someone other than a scheduler (at most MaxUnrecorded;
	// UnrecordedMore counts the rest).
	Unrecorded     []Unrecorded `json:"unrecorded,omitempty"`
	UnrecordedMore int          `json:"unrecorded_more,omitempty"`
}

// Unrecorded is a dispatched message the ledger does not account for.
type Unrecorded struct {
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	MsgID   string `json:"msg_id"`
	// Ledger says what the ledger holds for the message id: "no entry", or
	// "the entry points at sequence N" (LedgerSeq N: the message was
	// dispatched there, and this one is a second copy).
	Ledger    string `json:"ledger"`
	LedgerSeq uint64 `json:"ledger_seq,omitempty"`
}

// blockHashLen is how many bytes of each block's SHA-256 a digest keeps.
const blockHashLen = 8

// messageHash writes one message's part of a digest to h: its sequence (8
// bytes, big endian), then its subject, Nats-Msg-Id and body, each
// preceded by its length (4 bytes, big endian).
func messageHash(h hash.Hash, seq uint64, subject, msgID string, body []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], seq)
	h.Write(n[:])
	for _, part := range [][]byte{[]byte(subject), []byte(msgID), body} {
		binary.BigEndian.PutUint32(n[:4], uint32(len(part)))
		h.Write(n[:4])
		h.Write(part)
	}
}

// RangeHasher computes a Digest's hashes over the messages of a sequence
// range, given in increasing sequence order.
type RangeHasher struct {
	first, next     uint64
	block           int
	all, cur        hash.Hash
	blocks          []byte
	count           int
	gaps            [][2]uint64
	firstAt, lastAt time.Time
}

// NewRangeHasher starts the hashes of a range from sequence first, in
// blocks of block sequences.
func NewRangeHasher(first uint64, block int) *RangeHasher {
	return &RangeHasher{first: first, next: first, block: max(block, 1), all: sha256.New(), cur: sha256.New()}
}

// Count is how many messages were added.
func (r *RangeHasher) Count() int { return r.count }

// Add adds the message at seq (above every earlier one); the sequences
// skipped since the previous one are gaps.
func (r *RangeHasher) Add(seq uint64, subject, msgID string, body []byte, at time.Time) {
	r.skipTo(seq)
	messageHash(r.all, seq, subject, msgID, body)
	messageHash(r.cur, seq, subject, msgID, body)
	r.count++
	if r.firstAt.IsZero() {
		r.firstAt = at
	}
	r.lastAt = at
	r.advance()
}

// skipTo records the sequences from next up to seq (excluded) as gaps.
func (r *RangeHasher) skipTo(seq uint64) {
	if seq <= r.next {
		return
	}
	if n := len(r.gaps); n > 0 && r.gaps[n-1][1]+1 == r.next {
		r.gaps[n-1][1] = seq - 1
	} else {
		r.gaps = append(r.gaps, [2]uint64{r.next, seq - 1})
	}
	for r.next < seq {
		r.advance()
	}
}

// advance moves past sequence next, closing its block at its end.
func (r *RangeHasher) advance() {
	if (r.next-r.first+1)%uint64(r.block) == 0 {
		r.blocks = append(r.blocks, r.cur.Sum(nil)[:blockHashLen]...)
		r.cur.Reset()
	}
	r.next++
}

// Finish ends the range at last (the sequences after the last message
// added are gaps) and fills in d's range, count, times, hashes and gaps.
func (r *RangeHasher) Finish(last uint64, d *Digest) {
	r.skipTo(last + 1)
	if (last-r.first+1)%uint64(r.block) != 0 {
		r.blocks = append(r.blocks, r.cur.Sum(nil)[:blockHashLen]...)
	}
	d.First, d.Last, d.Count = r.first, last, r.count
	d.FirstAt, d.LastAt = r.firstAt, r.lastAt
	d.SHA256 = hex.EncodeToString(r.all.Sum(nil))
	d.BlockSize, d.Blocks, d.Gaps = r.block, r.blocks, r.gaps
}

// block returns the hash of block i of d (nil past the end).
func (d Digest) block(i int) []byte {
	if (i+1)*blockHashLen > len(d.Blocks) {
		return nil
	}
	return d.Blocks[i*blockHashLen : (i+1)*blockHashLen]
}

// inGap reports whether seq held no message when d was written.
func (d Digest) inGap(seq uint64) bool {
	for _, g := range d.Gaps {
		if seq >= g[0] && seq <= g[1] {
			return true
		}
	}
	return false
}
