package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/pkg/kvstore"
)

// RevisionReport is what VerifyOptions.Revisions found: the latest
// revision of every key of the buckets checked, against the intents their
// Sched-Audit-Seq headers name.
type RevisionReport struct {
	Checked int `json:"checked"`
	// Forged are revisions whose header names an entry that is not their
	// intent (another key, another value, not an intent, not signed, not
	// in the trail): a write made to look audited. They fail verify.
	Forged []Revision `json:"forged,omitempty"`
	// Unlinked are revisions that name no intent: written straight into
	// the bucket (an external entry records it once a scheduler's watch
	// saw it) or before write-ahead. Listed, they do not fail verify.
	Unlinked []Revision `json:"unlinked,omitempty"`
}

// Revision is one key-value revision a RevisionReport names.
type Revision struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	Rev    uint64 `json:"rev"`
	Op     string `json:"op"`
	// Intent is the trail sequence its header names (0: none); Reason why
	// it is not that revision's intent.
	Intent uint64 `json:"intent,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (r Revision) String() string {
	s := fmt.Sprintf("%s %q revision %d (%s)", r.Bucket, r.Key, r.Rev, r.Op)
	if r.Intent > 0 {
		s += fmt.Sprintf(" names entry %d", r.Intent)
	}
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// defaultRevisionBuckets are the buckets VerifyOptions.Revisions checks
// unless told otherwise: those the admin API writes for users.
var defaultRevisionBuckets = []string{"sched_specs", "sched_calendars", "sched_wakeups"}

// verifyRevisions checks the latest revision of every key of buckets.
func verifyRevisions(ctx context.Context, js jetstream.JetStream, trail jetstream.Stream, key []byte, buckets []string) (RevisionReport, error) {
	if len(buckets) == 0 {
		buckets = defaultRevisionBuckets
	}
	var r RevisionReport
	for _, b := range buckets {
		s, err := js.Stream(ctx, "KV_"+b)
		if err != nil {
			return r, fmt.Errorf("audit: bucket %s: %w", b, err)
		}
		if s.CachedInfo().State.Msgs == 0 {
			continue
		}
		c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy})
		if err != nil {
			return r, fmt.Errorf("audit: read bucket %s: %w", b, err)
		}
		for {
			m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
			if err != nil {
				return r, fmt.Errorf("audit: read bucket %s: %w", b, err)
			}
			md, err := m.Metadata()
			if err != nil {
				return r, fmt.Errorf("audit: read bucket %s: %w", b, err)
			}
			rev := checkRevision(ctx, trail, key, b, m, md.Sequence.Stream)
			r.Checked++
			switch {
			case rev == nil:
			case rev.Intent > 0:
				r.Forged = append(r.Forged, *rev)
			default:
				r.Unlinked = append(r.Unlinked, *rev)
			}
			if md.NumPending == 0 {
				break
			}
		}
	}
	return r, nil
}

// checkRevision returns what is wrong with revision rev of bucket (m),
// nil when it names its intent or is a scheduler's own timer claim.
func checkRevision(ctx context.Context, trail jetstream.Stream, key []byte, bucket string, m jetstream.Msg, rev uint64) *Revision {
	r := Revision{Bucket: bucket, Key: strings.TrimPrefix(m.Subject(), "$KV."+bucket+"."), Rev: rev, Op: "put"}
	switch m.Headers().Get("KV-Operation") {
	case "DEL":
		r.Op = "delete"
	case "PURGE":
		r.Op = "purge"
	}
	sum := ""
	if r.Op == "put" {
		h := sha256.Sum256(m.Data())
		sum = hex.EncodeToString(h[:])
	}
	seq, _ := strconv.ParseUint(m.Headers().Get(kvstore.AuditSeqHeader), 10, 64)
	if seq == 0 {
		if t, err := kvstore.DecodeTimer(m.Data()); r.Op == "put" && bucket == defaultRevisionBuckets[2] && err == nil && t.Claim != nil {
			return nil // a scheduler's claim of a timer: its own write
		}
		if r.Op == "purge" {
			return nil // the bucket's own history compaction
		}
		r.Reason = "no intent in the trail: written straight into the bucket, or before write-ahead"
		return &r
	}
	r.Intent = seq
	e, err := ReadEntry(ctx, trail, seq)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		r.Reason = "no such entry in the trail"
	case err != nil:
		r.Reason = err.Error()
	case !e.Valid(key):
		r.Reason = "that entry is not signed with the key"
	case e.Phase != PhaseIntent:
		r.Reason = "that entry is not an intent"
	case e.Bucket != bucket || e.Key != r.Key:
		r.Reason = fmt.Sprintf("that intent writes %s %q", e.Bucket, e.Key)
	case e.SHA256 != sum:
		r.Reason = "that intent writes another value"
	default:
		return nil
	}
	return &r
}
