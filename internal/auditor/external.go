package auditor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/jsstore"
	"github.com/jetsched/jetsched/pkg/audit"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// maxChanges bounds the changes one external entry lists.
const maxChanges = 1000

// watcher finds the changes to specs, calendars and timers that did not
// come through the admin API. It reads each bucket's stream (headers and
// value of every revision) from where the last external entry's
// watermarks left off, and follows the trail's action entries: an API
// write names its intent (header kvstore.AuditSeqHeader) and must match
// it (bucket, key, value hash; one revision per intent), and an entry of
// the earlier form names the revision its write made. A change waits
// Grace for its intent or entry; without one it is external. The scheduler's own timer writes are told
// apart by their shape: a claim (the timer as it was, plus a claim), and
// the delete of a claimed or expired timer.
type watcher struct {
	a   *Auditor
	ccs []jetstream.ConsumeContext

	mu  sync.Mutex
	api map[bucketRev]bool
	// intents are the trail's intents for the watched buckets that no
	// revision has claimed yet, by trail sequence.
	intents map[uint64]intentRef
	pending []candidate
	timers  map[string]timerShape // the wakeups bucket's current timers
	buckets map[string]*bucketWatch
	// owners are the instances holding a lease in sched_leases (read when
	// needed, kept a second): the schedulers whose claims are their own.
	owners   map[string]bool
	ownersAt time.Time
}

type bucketRev struct {
	bucket string
	rev    uint64
}

type candidate struct {
	change audit.Change
	seen   time.Time
	// intent is the trail sequence the write names (its
	// kvstore.AuditSeqHeader), 0 for none.
	intent uint64
}

// intentRef is what a revision naming an intent must match: the intent's
// bucket, key and value hash ("" for a delete), and when it was written.
type intentRef struct {
	bucket, key, sha string
	at               time.Time
}

// intentKeep is how long after an intent a revision of its bucket is
// still matched with it: a write follows its intent at once, so a later
// revision naming it is a replayed header, not the API's write.
const intentKeep = 5 * time.Minute

// timerShape is what the watcher keeps of a pending timer: the hash of the
// record without its claim, whether it is claimed, and its expiry.
type timerShape struct {
	hash    [16]byte
	claimed bool
	expires time.Time
}

// bucketWatch is the watch of one bucket.
type bucketWatch struct {
	// from is the first revision examined (earlier ones only build the
	// timers' shapes).
	from uint64
	// examined is the last revision examined, written at examinedAt;
	// recorded is the watermark of the last external entry.
	examined   uint64
	examinedAt time.Time
	recorded   uint64
}

// startWatcher starts the watch from the last external entry's
// watermarks; a bucket without one is watched from its next revision.
func startWatcher(ctx context.Context, a *Auditor) (*watcher, error) {
	w := &watcher{a: a, api: map[bucketRev]bool{}, intents: map[uint64]intentRef{}, timers: map[string]timerShape{}, buckets: map[string]*bucketWatch{}}
	marks := a.lastWatermarks(ctx)
	since := time.Now()
	l := a.layout
	streams := map[string]jetstream.Stream{}
	for _, b := range []string{l.SpecsBucket, l.CalendarsBucket, l.WakeupsBucket} {
		s, err := a.js.Stream(ctx, "KV_"+b)
		if err != nil {
			return nil, fmt.Errorf("bucket %s: %w", b, err)
		}
		streams[b] = s
		bw := &bucketWatch{from: s.CachedInfo().State.LastSeq + 1}
		if m, ok := marks[b]; ok {
			bw.from = m.Rev + 1
			if !m.At.IsZero() && m.At.Before(since) {
				since = m.At
			}
		}
		bw.examined, bw.recorded = bw.from-1, bw.from-1
		w.buckets[b] = bw
	}
	// The handlers start once every bucket's watch is set up.
	for _, b := range []string{l.SpecsBucket, l.CalendarsBucket, l.WakeupsBucket} {
		cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(w.buckets[b].from, 1)}
		if b == l.WakeupsBucket {
			// From the start: the current timers are the baseline their
			// claims are compared with.
			cfg = jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
		}
		if err := w.consume(ctx, streams[b], cfg, func(m jetstream.Msg) { w.onChange(b, m) }); err != nil {
			w.stop()
			return nil, err
		}
	}
	trail, err := a.js.Stream(ctx, a.trail.Stream)
	if err != nil {
		w.stop()
		return nil, err
	}
	// An intent comes before its write (an entry of the earlier form
	// after it): follow the trail from a minute before the oldest
	// watermark's write.
	start := since.Add(-time.Minute)
	err = w.consume(ctx, trail, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{a.trail.Subject + "." + audit.KindAction},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy, OptStartTime: &start,
	}, w.onEntry)
	if err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

func (w *watcher) consume(ctx context.Context, s jetstream.Stream, cfg jetstream.OrderedConsumerConfig, fn func(jetstream.Msg)) error {
	cfg.InactiveThreshold = time.Minute
	c, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("watch %s: %w", s.CachedInfo().Config.Name, err)
	}
	// Whole values (specs and timers up to their size limits): pulled a
	// byte limit at a time, not 500 values at once.
	cc, err := c.Consume(fn, jetstream.PullMaxMessagesWithBytesLimit(externalBatch, jsstore.PullBytes(w.a.js.Conn())))
	if err != nil {
		return fmt.Errorf("watch %s: %w", s.CachedInfo().Config.Name, err)
	}
	w.ccs = append(w.ccs, cc)
	return nil
}

// externalBatch is how many changes the external-change watch pulls at a
// time at most (nats.go's default), within kvstore.PullBytes.
const externalBatch = 500

// stop ends the watch and waits for its handlers.
func (w *watcher) stop() {
	for _, cc := range w.ccs {
		cc.Stop()
	}
	for _, cc := range w.ccs {
		<-cc.Closed()
	}
	w.ccs = nil
}

// lastWatermarks are the watermarks of the trail's last external entry
// signed with the key, by bucket.
func (a *Auditor) lastWatermarks(ctx context.Context) map[string]audit.Watermark {
	out := map[string]audit.Watermark{}
	trail, err := a.js.Stream(ctx, a.trail.Stream)
	if err != nil {
		return out
	}
	m, err := trail.GetLastMsgForSubject(ctx, a.trail.Subject+"."+audit.KindExternal)
	if err != nil {
		return out
	}
	var e audit.Entry
	var x audit.External
	if json.Unmarshal(m.Data, &e) != nil || !e.Valid(a.cfg.Key) || json.Unmarshal(e.Detail, &x) != nil {
		a.log.Error("the trail's last external entry is not signed with the key: watching the buckets from now on", "entry", m.Sequence)
		return out
	}
	for _, wm := range x.Watermarks {
		out[wm.Bucket] = wm
	}
	return out
}

// onChange examines one revision of a bucket.
func (w *watcher) onChange(bucket string, m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		return
	}
	rev, at := md.Sequence.Stream, md.Timestamp
	key := strings.TrimPrefix(m.Subject(), "$KV."+bucket+".")
	op := "put"
	switch m.Headers().Get("KV-Operation") {
	case "DEL":
		op = "delete"
	case "PURGE":
		op = "purge"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	own := bucket == w.a.layout.WakeupsBucket && w.timerWrite(key, op, m.Data(), at)
	bw := w.buckets[bucket]
	if rev < bw.from {
		return
	}
	bw.examined, bw.examinedAt = rev, at
	if own || w.api[bucketRev{bucket, rev}] {
		return
	}
	c := audit.Change{Bucket: bucket, Key: key, Rev: rev, Op: op, At: at.UTC()}
	if op == "put" {
		sum := sha256.Sum256(m.Data())
		c.SHA256 = hex.EncodeToString(sum[:])
	}
	cand := candidate{change: c, seen: time.Now()}
	cand.intent, _ = strconv.ParseUint(m.Headers().Get(kvstore.AuditSeqHeader), 10, 64)
	if w.claimIntent(cand) {
		return
	}
	w.pending = append(w.pending, cand)
}

// claimIntent reports whether c names an intent of the trail that it
// matches (bucket, key, and the value's hash for a put; no hash for a
// delete), and takes that intent: one revision per intent, so a header
// copied onto another write does not pass. Called with w.mu held.
func (w *watcher) claimIntent(c candidate) bool {
	in, ok := w.intents[c.intent]
	if !ok || in.bucket != c.change.Bucket || in.key != c.change.Key || in.sha != c.change.SHA256 {
		return false
	}
	delete(w.intents, c.intent)
	return true
}

// timerWrite updates the shape of timer key and reports whether the write
// is a scheduler's own: a claim of the timer as it was, or the delete of
// a claimed or expired timer.
func (w *watcher) timerWrite(key, op string, data []byte, at time.Time) bool {
	prev, had := w.timers[key]
	if op != "put" {
		delete(w.timers, key)
		return had && (prev.claimed || !prev.expires.IsZero() && !at.Before(prev.expires))
	}
	t, err := kvstore.DecodeTimer(data)
	if err != nil {
		delete(w.timers, key)
		return false
	}
	claimed := t.Claim != nil
	owner := ""
	if claimed {
		owner = t.Claim.Owner
	}
	t.Claim = nil
	plain, _ := json.Marshal(t)
	sum := sha256.Sum256(plain)
	var h [16]byte
	copy(h[:], sum[:])
	w.timers[key] = timerShape{hash: h, claimed: claimed, expires: t.ExpiresAt}
	if !claimed {
		return false
	}
	if had {
		return prev.hash == h
	}
	// The timer as it was before the claim is not known: the bucket keeps
	// one revision, so one written just before this watcher caught up is
	// gone. The claim is the scheduler's own when a live instance (one
	// holding a lease) made it.
	return owner != "" && w.liveOwner(owner)
}

// liveOwner reports whether instance holds a lease in sched_leases.
func (w *watcher) liveOwner(instance string) bool {
	if time.Since(w.ownersAt) > time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		owners := map[string]bool{}
		for _, o := range w.a.cfg.Store.LeaseOwners(ctx) {
			owners[o] = true
		}
		kv := w.a.cfg.Store.Leases()
		for _, key := range []string{LeaseKey} {
			if e, err := kv.Get(ctx, key); err == nil {
				var v struct {
					Owner string `json:"owner"`
				}
				if json.Unmarshal(e.Value(), &v) == nil && v.Owner != "" {
					owners[v.Owner] = true
				}
			}
		}
		w.owners, w.ownersAt = owners, time.Now()
	}
	return w.owners[instance]
}

// onEntry learns the API's writes from the trail's action entries (signed
// ones only): the intents of the watched buckets, which their revisions
// name, and, from entries of the earlier form, the revisions they name.
// An abandoned entry drops its intents: no revision may claim them.
func (w *watcher) onEntry(m jetstream.Msg) {
	var e audit.Entry
	if json.Unmarshal(m.Data(), &e) != nil || !e.Valid(w.a.cfg.Key) {
		return
	}
	md, err := m.Metadata()
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case e.Phase == audit.PhaseIntent:
		if _, watched := w.buckets[e.Bucket]; watched {
			w.intents[md.Sequence.Stream] = intentRef{bucket: e.Bucket, key: e.Key, sha: e.SHA256, at: e.At}
		}
	case e.Phase == audit.PhaseAbandoned:
		for _, seq := range e.Intents {
			delete(w.intents, seq)
		}
	case e.Bucket != "" && e.Rev != 0:
		w.api[bucketRev{e.Bucket, e.Rev}] = true
	}
}

// flush writes an external entry with the changes whose grace is over and
// no API entry claimed, and the watermarks, when there is anything new. It
// reports whether it wrote one.
func (w *watcher) flush(ctx context.Context) (bool, error) {
	w.mu.Lock()
	now := time.Now()
	var changes []audit.Change
	keep := w.pending[:0]
	for _, c := range w.pending {
		switch {
		case w.api[bucketRev{c.change.Bucket, c.change.Rev}], w.claimIntent(c):
		case now.Sub(c.seen) >= w.a.cfg.Grace && len(changes) < maxChanges:
			changes = append(changes, c.change)
		default:
			keep = append(keep, c)
		}
	}
	w.pending = keep
	var marks []audit.Watermark
	moved := false
	for _, b := range []string{w.a.layout.SpecsBucket, w.a.layout.CalendarsBucket, w.a.layout.WakeupsBucket} {
		bw := w.buckets[b]
		mark := audit.Watermark{Bucket: b, Rev: bw.examined, At: bw.examinedAt.UTC()}
		for _, c := range w.pending {
			if c.change.Bucket == b && c.change.Rev <= mark.Rev {
				mark.Rev, mark.At = c.change.Rev-1, c.change.At // an undecided change stays after the mark
			}
		}
		moved = moved || mark.Rev != bw.recorded
		marks = append(marks, mark)
	}
	for br := range w.api {
		if br.rev <= w.buckets[br.bucket].examined {
			delete(w.api, br) // decided: no later change can need it
		}
	}
	for seq, in := range w.intents {
		if in.at.Before(w.buckets[in.bucket].examinedAt.Add(-intentKeep)) {
			delete(w.intents, seq) // its write is long past: never to come
		}
	}
	w.mu.Unlock()
	if len(changes) == 0 && !moved {
		return false, nil
	}
	action := "external.watermark"
	if len(changes) > 0 {
		action = "external.change"
	}
	detail, _ := json.Marshal(audit.External{Changes: changes, Watermarks: marks})
	if _, err := w.a.cfg.Log.Append(ctx, audit.Entry{Kind: audit.KindExternal, Action: action, Target: "buckets", Detail: detail}); err != nil {
		w.mu.Lock()
		for _, c := range changes {
			w.pending = append(w.pending, candidate{change: c, seen: time.Time{}})
		}
		w.mu.Unlock()
		return false, err
	}
	w.mu.Lock()
	for _, m := range marks {
		w.buckets[m.Bucket].recorded = m.Rev
	}
	w.mu.Unlock()
	for _, c := range changes {
		w.a.log.Warn("external change recorded: written straight into a bucket, not through the admin API",
			"bucket", c.Bucket, "key", c.Key, "revision", c.Rev, "op", c.Op)
	}
	return true, nil
}
