package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// SignatureHeader carries a fire's signature: schedulers with an audit key
// sign every fire they publish, so that the audit's digests can tell the
// scheduler's fires from messages injected into the fire stream. The fire
// stream is the ledger of dispatched slots: there is no ledger entry per
// fire to compare a message with.
const SignatureHeader = "Sched-Signature"

// SignFire is the signature of a fire published on subject with slot id
// msgID, scheduled at scheduledAt (the Sched-Scheduled-At header) and body
// data: a hex HMAC-SHA256 under the audit key, over each part with its
// length, so that no two different fires sign alike.
func SignFire(key []byte, subject, msgID, scheduledAt string, data []byte) string {
	h := hmac.New(sha256.New, key)
	for _, part := range [][]byte{[]byte("jetsched-fire-v1"), []byte(subject), []byte(msgID), []byte(scheduledAt), data} {
		var n [8]byte
		l := uint64(len(part))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// FireSigned reports whether sig is the signature of that fire under key.
func FireSigned(key []byte, sig, subject, msgID, scheduledAt string, data []byte) bool {
	return sig != "" && hmac.Equal([]byte(sig), []byte(SignFire(key, subject, msgID, scheduledAt, data)))
}
