package fires

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
	"github.com/jetsched/jetsched/internal/jsname"
	"github.com/jetsched/jetsched/internal/natserr"
	"github.com/jetsched/jetsched/internal/pipelined"
	"github.com/jetsched/jetsched/internal/skew"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// leaseValue is the value of shard.<n> and member.<instance> in
// sched_leases.
type leaseValue struct {
	Owner   string    `json:"owner"`
	Renewed time.Time `json:"renewed"`
	TTL     string    `json:"ttl"`
	// Run tells this process's records from a previous one's under the
	// same instance name (the clock-skew watcher measures only its own).
	Run string `json:"run,omitempty"`
	// Caps are what this scheduler's protocol understands beyond the
	// first release's, for instances that may only do something once
	// every member does (see capBehindStream).
	Caps []string `json:"caps,omitempty"`
}

// capBehindStream: this instance checks a state record against the fire
// stream before deciding it when the record may be behind (lagging.go),
// so that an owner may leave records behind the stream for a while.
const capBehindStream = "behind-stream"

// capEndedLists: this instance reads ended lists (ended.<shard>.<token>
// in the leases bucket, ended.go) as the ended records of the one-shots
// they list, so that an owner may write one list for a window's
// one-shots instead of a record each (Config.EndedLists).
const capEndedLists = "ended-lists"

// announced is what every instance of this version announces.
func announced() []string { return []string{capBehindStream, capEndedLists} }

// leases holds this instance's share of the shards. Each lease is a key
// with a per-key TTL, renewed by CAS (a publish that expects the key's last
// revision and sets a fresh TTL). Instances register as members the same
// way; each aims at ceil(shards/members) leases, takes free ones and hands
// extras back, so joining and leaving rebalance. Leases only keep
// instances from racing on every slot: the state CAS stays the guard, so
// two owners for a moment is safe.
type leases struct {
	kv       jetstream.KeyValue
	js       jetstream.JetStream
	instance string
	shards   int
	ttl      time.Duration
	clock    clock.Clock
	log      *slog.Logger
	event    func(kvstore.Event)
	observe  func(int)
	// guards is told the number of held leases whose guard is closed
	// (Observer.GuardsClosed), as observe is told the number held.
	guards func(int)
	// failed, when set, is told of each renewal that failed but for a
	// conflict (NATS away, a full store): the engine's Episodes.
	failed  func(shard int, err error)
	changed chan struct{} // buffered 1: ownership changed (the fire loop)

	subMu sync.Mutex
	subs  []chan struct{} // more listeners (the wakeup engine)

	// runID identifies this process's lease records (leaseValue.Run).
	runID string
	// joinAt, when set, keeps this instance out of the shares (no member
	// key, no lease taken) until it is closed: an instance that joins a
	// running fleet takes shards once its index is complete, while the
	// others go on firing them (run's goroutine only, after Start).
	joinAt <-chan struct{}

	// readCaps: the rounds read the members' caps (fleetReads), for an
	// engine that leaves state records behind (Config.StateInterval).
	readCaps bool
	// allRead: at the last round every member announced capBehindStream;
	// allLists: and capEndedLists.
	allRead, allLists atomic.Bool
	// beforeDrop, when set, runs before a shard is handed back to
	// rebalance, bounded by handBackWait: the engine writes the shard's
	// records left behind and turns its ended lists into records
	// (handback.go). It reports whether that is done.
	beforeDrop func(ctx context.Context, shards []int) bool
	// handBackFrom is when the rounds began to hold back a hand-back
	// whose records were not written in time (zero: none held back);
	// the rebalance goroutine's only.
	handBackFrom time.Time
	// rebalancing, when set, runs as a rebalance begins (tests: a slow
	// one).
	rebalancing func()

	// joined is joinAt's news for the renewal loop: the member key is
	// kept alive once this instance is in the shares.
	joined atomic.Bool

	// writeMu orders this instance's renewals, hand-backs and member-key
	// writes, which the renewal loop and the rounds make from two
	// goroutines (a take needs none: a renewal pass renews only what was
	// held when it began): a renewal landing between a
	// hand-back's read of the revision and its delete would leave the
	// lease to expire instead of moving at once. It also guards member.
	writeMu sync.Mutex
	member  uint64 // revision of member.<instance>
	// memberAcked is when member's write was acknowledged, on the
	// process's monotonic clock (see skew.ServerClock).
	memberAcked time.Time

	// server is the server's time as this process knows it, from its own
	// member record's writes: the records of the bucket are judged by it
	// (leasejudge.go).
	server skew.ServerClock
	// warned is when each ignored record was last reported
	// (warnIgnored); the rebalance goroutine's only.
	warned map[string]time.Time

	// reportMu orders the observer's calls (report).
	reportMu sync.Mutex

	mu   sync.Mutex
	held map[int]heldLease
	gens uint64 // leases taken so far: each one's generation
}

type heldLease struct {
	rev     uint64
	renewed time.Time // last successful write, by this instance's clock
	// gen tells one tenure of the lease from the next (see generation);
	// taken is when the tenure began, by this instance's clock (before
	// the lease's write was sent).
	gen   uint64
	taken time.Time
	// closed: the lease loop found the guard closed (no renewal for
	// guardAt) and said so with guard_closed; a renewal that succeeds
	// then says guard_opened.
	closed bool
}

func newLeases(kv jetstream.KeyValue, js jetstream.JetStream, instance string, shards int, ttl time.Duration, c clock.Clock, log *slog.Logger, event func(kvstore.Event)) *leases {
	return &leases{
		kv: kv, js: js, instance: instance, shards: shards, ttl: ttl,
		clock: c, log: log.With("component", "leases"), event: event, observe: func(int) {}, guards: func(int) {},
		changed: make(chan struct{}, 1), held: make(map[int]heldLease), runID: randomID(),
	}
}

// owns reports whether this instance may dispatch schedules of shard: it
// holds the lease and renewed it within 90% of the TTL.
func (l *leases) owns(shard int) bool {
	_, ok := l.tenure(shard)
	return ok
}

// generation identifies this instance's current tenure of shard's lease:
// it changes whenever the lease is taken again, so that the fire loop
// checks the shard's window claim once per tenure. ok is owns(shard).
func (l *leases) generation(shard int) (gen uint64, ok bool) {
	h, ok := l.tenure(shard)
	return h.gen, ok
}

// tenure is shard's lease if this instance owns it (see owns).
func (l *leases) tenure(shard int) (heldLease, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, held := l.held[shard]
	if !held || l.clock.Now().Sub(h.renewed) >= l.guardAt() {
		return heldLease{}, false
	}
	return h, true
}

// guardAt is how long a held lease may go without a successful renewal
// before its shard stops being dispatched (the guard closes): 90% of the
// TTL, so that by the time the lease can expire and move this instance
// has stopped.
func (l *leases) guardAt() time.Duration { return l.ttl * 9 / 10 }

// since is when this instance's current tenure of shard's lease began;
// ok is owns(shard). A state record this instance wrote since then
// follows from its own decisions in this tenure (see worker.lagging).
func (l *leases) since(shard int) (taken time.Time, ok bool) {
	h, ok := l.tenure(shard)
	return h.taken, ok
}

// setShards fixes the shard count for a run (read from the leases
// bucket at Start).
func (l *leases) setShards(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.shards = n
}

// shardCount is the shard count (0 before the first Start).
func (l *leases) shardCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shards
}

// count is the number of leases held.
func (l *leases) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}

// run renews the leases and the member key every third of the TTL (on a
// goroutine of its own, renewLoop) and rebalances as often until ctx
// ends, then hands every lease back. Between rounds it looks again at
// once when moves (watchMoves) says a lease was handed back or a member
// joined or left, so that a rolling restart moves shards in milliseconds
// rather than at the next round.
//
// The renewals do not wait for the rebalance: a rebalance reads every key
// of the leases bucket and every member key, several round trips, and
// with 400 ms of round trip (integration/links, latency-200ms) a round of
// both took ~3 s, past the guard (90% of a 2 s TTL): every renewal came
// after a silence and the fleet fired nothing while the latency lasted.
func (l *leases) run(ctx context.Context, moves jetstream.KeyWatcher) {
	l.joined.Store(l.joinAt == nil)
	renewCtx, stopRenewing := context.WithCancel(ctx)
	var renewing sync.WaitGroup
	renewing.Go(func() { l.renewLoop(renewCtx) })
	defer func() {
		stopRenewing()
		renewing.Wait() // before release: no renewal after the hand-back
		l.release()
	}()
	tick := l.clock.NewTimer(l.ttl / 3)
	defer tick.Stop()
	var updates <-chan jetstream.KeyValueEntry
	if moves != nil {
		defer func() { _ = moves.Stop() }()
		updates = moves.Updates()
	}
	members := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.joinAt:
			l.joinAt = nil
			l.joined.Store(true)
			l.round(ctx)
		case <-tick.C:
			// The renewal loop looks at the guards too, but not while it
			// waits for a round's acknowledgements.
			l.closeGuards()
			rctx, cancel := context.WithTimeout(ctx, l.ttl/2)
			l.rebalance(rctx)
			cancel()
			tick.Reset(l.ttl / 3)
		case kv, ok := <-updates:
			if !ok {
				updates = nil // the rounds go on
				continue
			}
			if !l.moved(kv, members) {
				continue
			}
			// A hand-back comes in bursts (every lease of an instance,
			// then its member key): take what is queued already, then
			// look once.
			for more := true; more; {
				select {
				case kv, ok := <-updates:
					if !ok {
						updates, more = nil, false
						continue
					}
					l.moved(kv, members)
				default:
					more = false
				}
			}
			rctx, cancel := context.WithTimeout(ctx, l.ttl/2)
			l.rebalance(rctx)
			cancel()
		}
	}
}

// watchMoves opens the watch run reacts to: deletes of shard leases and
// member keys, and puts of member keys (a member's first put is a join).
// A watch that cannot be opened leaves the rounds alone to move shards
// (logged).
func (l *leases) watchMoves(ctx context.Context) jetstream.KeyWatcher {
	w, err := l.kv.WatchFiltered(ctx, []string{"shard.*", "member.*"}, jetstream.UpdatesOnly(), jetstream.MetaOnly())
	if err != nil {
		l.log.Warn("cannot watch the leases; shards move at the lease rounds only", "err", err)
		return nil
	}
	return w
}

// moved reports whether kv is news for the shares: a lease or member key
// deleted, or a member key not seen before (members, updated).
func (l *leases) moved(kv jetstream.KeyValueEntry, members map[string]bool) bool {
	if kv == nil {
		return false
	}
	key, gone := kv.Key(), kv.Operation() != jetstream.KeyValuePut
	if strings.HasPrefix(key, "member.") {
		if gone {
			delete(members, key)
			return true
		}
		if members[key] {
			return false // a renewal
		}
		members[key] = true
		return key != "member."+l.instance
	}
	return gone // a shard lease handed back; puts are renewals or takes
}

// renewLoop renews what is held and, once joined, the member key, every
// third of the TTL (from the end of the last renewal) until ctx ends.
func (l *leases) renewLoop(ctx context.Context) {
	tick := l.clock.NewTimer(l.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, l.ttl/2)
		l.renewAll(rctx)
		if l.joined.Load() {
			l.registerMember(rctx)
		}
		cancel()
		tick.Reset(l.ttl / 3)
	}
}

// round renews what is held, registers this member, and takes or gives
// leases towards the fair share (once joined: see joinAt): the first
// round of a start, and a join's.
func (l *leases) round(ctx context.Context) {
	if l.joinAt != nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, l.ttl/2)
	defer cancel()
	l.renewAll(rctx)
	l.registerMember(rctx)
	l.rebalance(rctx)
}

// rebalance takes or gives leases towards the fair share of the live
// members.
func (l *leases) rebalance(ctx context.Context) {
	if l.joinAt != nil {
		return
	}
	if l.rebalancing != nil {
		l.rebalancing()
	}
	sv, err := l.survey(ctx)
	if err != nil {
		l.log.Debug("lease survey", "err", err)
		l.allRead.Store(false)
		l.allLists.Store(false)
		return
	}
	if l.readCaps {
		l.allRead.Store(sv.reads)
		l.allLists.Store(sv.lists)
	}
	members := len(sv.members)
	target := (l.shards + members - 1) / members
	held := l.heldShards()
	if extra := len(held) - target; extra > 0 {
		// Hand back the extras so that a joining instance gets its share.
		extras := held[len(held)-extra:]
		if l.beforeDrop != nil {
			fctx, cancel := context.WithTimeout(ctx, handBackWait(l.ttl))
			done := l.beforeDrop(fctx, extras)
			cancel()
			if !done && l.holdBack(extras) {
				return
			}
		}
		l.handBackFrom = time.Time{}
		for _, s := range extras {
			l.drop(ctx, s, "rebalance")
		}
		return
	}
	l.handBackFrom = time.Time{}
	for _, s := range l.order() {
		if len(l.heldShards()) >= target {
			return
		}
		if sv.busy[s] || l.holds(s) {
			continue
		}
		l.acquire(ctx, s, sv.over[s])
	}
}

// holdBack reports whether a hand-back of shards whose records were not
// all written within handBackWait is to wait for a later round: while a
// member does not read what this instance leaves behind (records behind
// the stream, ended lists), and for handBackPatience at most, after
// which the shards go anyway (a joining member is never kept out) and
// their next owner looks their one-shots up in the stream. The shards
// stay owned and firing meanwhile; the engine goes on writing their
// records.
func (l *leases) holdBack(shards []int) bool {
	if l.allRead.Load() && l.allLists.Load() {
		return false // every member reads them: the next owner catches up
	}
	now := l.clock.Now()
	if l.handBackFrom.IsZero() {
		l.handBackFrom = now
	}
	if waited := now.Sub(l.handBackFrom); waited < handBackPatience(l.ttl) {
		l.log.Debug("hand-back held back: its records are still being written", "shards", shards, "waited", waited)
		return true
	}
	l.log.Warn("handing back shards with records not yet written; their next owner looks their one-shots up in the stream",
		"shards", shards, "waited", now.Sub(l.handBackFrom))
	return false
}

// order is the shard order this instance tries: a rotation seeded by its
// id, so that instances do not all contend for shard 0 first.
func (l *leases) order() []int {
	start := kvstore.ShardOf(l.instance, l.shards)
	out := make([]int, l.shards)
	for i := range out {
		out[i] = (start + i) % l.shards
	}
	return out
}

func (l *leases) heldShards() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]int, 0, len(l.held))
	for s := range l.held {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// holds reports whether this instance holds shard's lease (owned or
// not: see owns).
func (l *leases) holds(shard int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[shard]
	return ok
}

// othersAlive reports whether another instance has a live member key: a
// running fleet this one joins. On an error it says no (the instance then
// takes its share at once, as on a fleet's first start). A member record
// the survey would ignore is no fleet (leasejudge.go).
func (l *leases) othersAlive(ctx context.Context) bool {
	recs, floor, err := l.readRecords(ctx)
	if err != nil {
		return false
	}
	return len(judge(recs, l.instance, l.runID, l.shardCount(), l.server.Now(floor), l.ttl).members) > 1
}

// fleetReads reports whether, at the last lease round, every member of
// the fleet announced that it checks state records against the fire
// stream (capBehindStream): only then may this instance leave its records
// behind. False until the first round.
func (l *leases) fleetReads() bool { return l.allRead.Load() }

// fleetLists reports whether, at the last lease round, every member of
// the fleet announced that it reads ended lists (capEndedLists): only
// then may this instance write them. False until the first round.
func (l *leases) fleetLists() bool { return l.allLists.Load() }

// survey reads the shard leases and member records and judges them by
// the server's clock (leasejudge.go): the live members, the shards
// leased, the shards whose record is ignored. The ignored records are
// reported (warnIgnored).
func (l *leases) survey(ctx context.Context) (surveyed, error) {
	recs, floor, err := l.readRecords(ctx)
	if err != nil {
		return surveyed{}, err
	}
	l.writeMu.Lock()
	own, acked := l.member, l.memberAcked
	l.writeMu.Unlock()
	for _, r := range recs {
		if own != 0 && r.rev == own && r.key == "member."+l.instance {
			l.server.Observe(r.created, acked)
		}
	}
	sv := judge(recs, l.instance, l.runID, l.shardCount(), l.server.Now(floor), l.ttl)
	l.warnIgnored(sv.ignored)
	return sv, nil
}

// readRecords reads every shard lease and member record, with floor the
// latest server time of their writes. It fails rather than return part
// of them: a survey that missed members would take too many shards.
func (l *leases) readRecords(ctx context.Context) (recs []leaseRecord, floor time.Time, err error) {
	w, err := l.kv.WatchFiltered(ctx, []string{"shard.*", "member.*"}, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the leases: %w", err)
	}
	defer func() { _ = w.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil, time.Time{}, fmt.Errorf("read the leases: %w", ctx.Err())
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				return nil, time.Time{}, errors.New("read the leases: the watch ended")
			case e == nil:
				return recs, floor, nil // every record read
			}
			recs = append(recs, leaseRecord{key: e.Key(), rev: e.Revision(), created: e.Created(), value: e.Value()})
			if e.Created().After(floor) {
				floor = e.Created()
			}
		}
	}
}

// ignoredWarnEvery is how often one ignored record is reported again
// while it stays; maxWarned bounds the records remembered meanwhile.
const (
	ignoredWarnEvery = time.Minute
	maxWarned        = 1024
)

// warnIgnored reports the ignored records not reported within
// ignoredWarnEvery: a lease_ignored event each, one warning for them all.
func (l *leases) warnIgnored(ignored []ignoredRecord) {
	now := l.clock.Now()
	for k, at := range l.warned {
		if now.Sub(at) >= ignoredWarnEvery {
			delete(l.warned, k)
		}
	}
	if len(ignored) == 0 {
		return
	}
	if l.warned == nil {
		l.warned = map[string]time.Time{}
	}
	var keys, whys []string
	for _, r := range ignored {
		if _, seen := l.warned[r.key]; seen || len(l.warned) >= maxWarned {
			continue
		}
		l.warned[r.key] = now
		ev := kvstore.Event{Kind: kvstore.EventLeaseIgnored, Key: r.key, Reason: r.why, Holder: r.owner, Owner: l.instance, At: now.UTC()}
		if r.shard >= 0 {
			ev.Shard = &r.shard
		}
		if r.age > 0 {
			ev.Silence = silenceString(r.age)
		}
		l.event(ev)
		keys, whys = append(keys, r.key), append(whys, r.why)
	}
	if len(keys) > 0 {
		l.log.Warn("records in the leases bucket ignored: not believable by the server's clock (forged, or written by hand without a TTL); their shards are taken, they count as no member",
			"keys", keys, "why", whys, "ignored", len(ignored))
	}
}

func (l *leases) value() []byte {
	b, _ := json.Marshal(leaseValue{Owner: l.instance, Renewed: l.clock.Now().UTC(), TTL: l.ttl.String(), Run: l.runID, Caps: announced()})
	return b
}

// acquire creates shard.<n> with a TTL: it succeeds only if no live lease
// exists. over, when not 0, is the revision of an ignored record there
// (leasejudge.go): the lease is written over it by CAS, which fails if
// anyone wrote the key since.
func (l *leases) acquire(ctx context.Context, shard int, over uint64) {
	sent := l.clock.Now() // the TTL runs from the server's write, before the ack (see renewAll)
	var rev uint64
	var err error
	if over == 0 {
		rev, err = l.kv.Create(ctx, shardKey(shard), l.value(), jetstream.KeyTTL(l.ttl))
	} else {
		rev, err = l.casTTL(ctx, shardKey(shard), over)
	}
	if err != nil {
		return // someone holds it (or NATS is away): try next round
	}
	l.mu.Lock()
	l.gens++
	l.held[shard] = heldLease{rev: rev, renewed: sent, gen: l.gens, taken: sent}
	l.mu.Unlock()
	l.log.Debug("lease gained", "shard", shard)
	l.event(kvstore.Event{Kind: kvstore.EventLeaseGained, Shard: &shard, Owner: l.instance, At: l.clock.Now().UTC()})
	l.notify()
}

// renewAll refreshes every held lease by CAS with a new TTL. A lease
// whose revision moved on is dropped, with the reason read from its key
// (whyLost): expired, or taken over by the instance whose value is there.
// A lease renewed after a silence past the guard (owns was false, so the
// loops parked its due schedules) is news for the loops, as a gained one
// is, and its guard's closing and opening are reported (closeGuards,
// guard_opened).
//
// The renewals go out together and their acknowledgements are awaited
// after: one after the other, a round took a round trip per shard held,
// and over a link with 400 ms of round trip an instance holding 22 shards
// renewed each only every ~9 s, past the TTL, so the fleet kept taking its
// leases from one another and fired nothing (integration/links,
// latency-200ms). A renewal counts from when it was sent: the server's TTL
// starts when it stores the write, before its acknowledgement comes back.
func (l *leases) renewAll(ctx context.Context) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	// A round that comes late (a starved process) finds the guards it
	// missed closed: they are reported before the renewals say more.
	l.closeGuards()
	type renewal struct {
		shard int
		was   heldLease
		fut   jetstream.PubAckFuture
		err   error
	}
	held := l.heldShards()
	out := make([]renewal, 0, len(held))
	sent := l.clock.Now()
	for _, s := range held {
		l.mu.Lock()
		h, ok := l.held[s]
		l.mu.Unlock()
		if !ok {
			continue
		}
		f, err := l.casTTLAsync(ctx, shardKey(s), h.rev)
		out = append(out, renewal{shard: s, was: h, fut: f, err: err})
	}
	var reopened []guardChange
	var conflicts []heldShard
	for _, r := range out {
		rev, err := pipelined.AwaitRevision(ctx, r.fut, r.err)
		switch {
		case err == nil:
			l.mu.Lock()
			if cur, ok := l.held[r.shard]; ok && cur.rev == r.was.rev {
				// Not owned any more when the acknowledgement came (sent
				// in time or not): the loops parked the shard's due
				// schedules and must hear that it is owned again.
				if silence := l.clock.Now().Sub(r.was.renewed); cur.closed || silence >= l.guardAt() {
					reopened = append(reopened, guardChange{shard: r.shard, silence: silence, reported: cur.closed})
				}
				l.held[r.shard] = heldLease{rev: rev, renewed: sent, gen: r.was.gen, taken: r.was.taken}
			}
			l.mu.Unlock()
		case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
			conflicts = append(conflicts, heldShard{shard: r.shard, lease: r.was})
		default:
			// NATS is away: keep trying; owns() turns false at 90% TTL.
			l.log.Debug("lease renewal failed", "shard", r.shard, "err", err)
			if l.failed != nil {
				l.failed(r.shard, err)
			}
		}
	}
	if len(conflicts) > 0 {
		reopened = append(reopened, l.lostAll(ctx, conflicts)...)
	}
	if len(reopened) > 0 {
		l.openGuards(reopened)
	}
	// Renewals that failed, or whose acknowledgement came late, may have
	// let more guards close meanwhile.
	l.closeGuards()
}

// guardChange is a shard whose guard closed or opened after silence
// without a successful renewal; reported: its closing was said already.
type guardChange struct {
	shard    int
	silence  time.Duration
	reported bool
}

// heldShard is a shard with the lease this instance held of it.
type heldShard struct {
	shard int
	lease heldLease
}

// closeGuards reports the held leases whose guard has closed (no
// renewal for guardAt) since the last look: a guard_closed event for
// each, one warning, the gauge. A guard closes with the passage of time,
// not at a write, so the lease loops look at every round (renewAll, run)
// and the dispatch path (owns) only compares times, at no cost per fire.
func (l *leases) closeGuards() {
	var closed []guardChange
	l.mu.Lock()
	now := l.clock.Now()
	for s, h := range l.held {
		if silence := now.Sub(h.renewed); !h.closed && silence >= l.guardAt() {
			h.closed = true
			l.held[s] = h
			closed = append(closed, guardChange{shard: s, silence: silence})
		}
	}
	l.mu.Unlock()
	if len(closed) == 0 {
		return
	}
	slices.SortFunc(closed, func(a, b guardChange) int { return a.shard - b.shard })
	for _, c := range closed {
		l.guardEvent(kvstore.EventGuardClosed, c)
	}
	shards, longest := span(closed)
	l.log.Warn("lease guard closed: no renewal for 90% of the TTL; not dispatching these shards until one succeeds (a starved process or NATS out of reach)",
		"shards", shards, "silence", longest, "ttl", l.ttl)
	l.report()
}

// openGuards reports the leases renewed after their guard closed, each
// with the silence it ended (a guard_closed first for one whose closing
// was not said yet: it closed while its renewal was on its way), and
// wakes the loops, which parked the shards' due schedules meanwhile.
func (l *leases) openGuards(opened []guardChange) {
	for _, c := range opened {
		if !c.reported {
			l.guardEvent(kvstore.EventGuardClosed, c)
		}
		l.guardEvent(kvstore.EventGuardOpened, c)
	}
	shards, longest := span(opened)
	l.log.Info("lease guard opened: renewals resumed after a silence; dispatching again",
		"shards", shards, "silence", longest, "ttl", l.ttl)
	l.notify()
}

// span is the shards of changes and the longest of their silences, for
// a log line.
func span(changes []guardChange) (shards []int, longest time.Duration) {
	for _, c := range changes {
		shards = append(shards, c.shard)
		longest = max(longest, c.silence)
	}
	return shards, longest.Round(time.Millisecond)
}

// guardEvent raises an event of kind about c.
func (l *leases) guardEvent(kind kvstore.EventKind, c guardChange) {
	l.event(kvstore.Event{Kind: kind, Shard: &c.shard, Silence: silenceString(c.silence), Owner: l.instance, At: l.clock.Now().UTC()})
}

// silenceString is a silence as events carry it: a Go duration, to the
// millisecond.
func silenceString(d time.Duration) string { return d.Round(time.Millisecond).String() }

// Why a lease was lost (lease_lost's Reason).
const (
	// lostExpired: the lease's key was gone when its renewal came:
	// expired on the server after a TTL without renewal (a starved
	// process, NATS out of reach), or deleted.
	lostExpired = "expired"
	// lostTakenOver: another instance's value is there.
	lostTakenOver = "taken over"
	// lostConflict: the renewal's CAS failed and the key could not be
	// read to say why.
	lostConflict = "conflict"
)

// loss is why a renewal's CAS failed: the key's state (whyLost).
type loss struct {
	why    string // lostExpired, lostTakenOver, lostConflict; "" if the lease is still this process's
	holder string // lostTakenOver: the owner of the value there
	run    string // ... and its process (leaseValue.Run)
	err    error  // lostConflict: why the key could not be read
	// The key's revision and when it was written, when it holds this
	// process's own value (a renewal whose acknowledgement was lost).
	rev     uint64
	renewed time.Time
}

// lostAll drops the leases whose renewal found another revision, each
// with why (whyLost), and says so: a lease_lost event each, and a
// warning per reason and holder, with the silence since their last
// renewal. A lease whose key holds this process's own last write (a
// renewal that timed out but was stored) is kept at that revision; if
// that reopens its guard, it is returned.
func (l *leases) lostAll(ctx context.Context, conflicts []heldShard) (reopened []guardChange) {
	// Read the keys at once: they can be many (a starved process finds
	// every lease it held expired), and each read is a round trip.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.ttl/3)
	defer cancel()
	losses := make([]loss, len(conflicts))
	var reads sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, c := range conflicts {
		reads.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			losses[i] = l.whyLost(rctx, c.shard)
		})
	}
	reads.Wait()

	type group struct{ why, holder, run string }
	groups := map[group][]int{}
	var order []group
	longest := map[group]time.Duration{}
	errs := map[group]error{}
	now := l.clock.Now()
	for i, c := range conflicts {
		ls := losses[i]
		if ls.why == "" {
			l.mu.Lock()
			if cur, ok := l.held[c.shard]; ok && cur.rev == c.lease.rev {
				if cur.closed && now.Sub(ls.renewed) < l.guardAt() {
					reopened = append(reopened, guardChange{shard: c.shard, silence: now.Sub(c.lease.renewed), reported: true})
					cur.closed = false
				}
				cur.rev, cur.renewed = ls.rev, ls.renewed
				l.held[c.shard] = cur
			}
			l.mu.Unlock()
			l.log.Debug("lease renewal conflicted with this process's own earlier renewal, stored though unacknowledged; kept", "shard", c.shard, "revision", ls.rev)
			continue
		}
		silence := now.Sub(c.lease.renewed)
		l.mu.Lock()
		delete(l.held, c.shard)
		l.mu.Unlock()
		l.event(kvstore.Event{Kind: kvstore.EventLeaseLost, Shard: &c.shard, Reason: ls.why, Holder: ls.holder,
			Silence: silenceString(silence), Owner: l.instance, At: now.UTC()})
		g := group{ls.why, ls.holder, ls.run}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], c.shard)
		longest[g] = max(longest[g], silence)
		if ls.err != nil {
			errs[g] = ls.err
		}
	}
	for _, g := range order {
		attrs := []any{"shards", groups[g], "why", g.why, "silence", longest[g].Round(time.Millisecond), "ttl", l.ttl}
		switch g.why {
		case lostExpired:
			l.log.Warn("lease lost: its key expired (or was deleted) before a renewal reached the server", attrs...)
		case lostTakenOver:
			attrs = append(attrs, "holder", g.holder)
			if g.holder == l.instance {
				attrs = append(attrs, "holder_run", g.run, "run", l.runID) // another process under this name
			}
			l.log.Warn("lease lost: taken over", attrs...)
		default:
			l.log.Warn("lease lost: its renewal conflicted and the key could not be read", append(attrs, "err", errs[g])...)
		}
	}
	if len(order) > 0 {
		l.notify()
	}
	return reopened
}

// whyLost reads shard's key after its renewal's CAS failed: gone (the
// server expired it, or it was deleted) is lostExpired, another
// instance's value lostTakenOver, and this process's own value (a renewal
// it sent was stored but its acknowledgement did not come) is no loss.
func (l *leases) whyLost(ctx context.Context, shard int) loss {
	e, err := l.kv.Get(ctx, shardKey(shard))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return loss{why: lostExpired}
	case err != nil:
		return loss{why: lostConflict, err: fmt.Errorf("read %s: %w", shardKey(shard), err)}
	}
	var v leaseValue
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return loss{why: lostTakenOver} // someone wrote something else there
	}
	if v.Owner == l.instance && v.Run == l.runID {
		return loss{rev: e.Revision(), renewed: v.Renewed}
	}
	return loss{why: lostTakenOver, holder: v.Owner, run: v.Run}
}

// registerMember keeps member.<instance> alive.
func (l *leases) registerMember(ctx context.Context) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	key := "member." + l.instance
	if l.member != 0 {
		if rev, err := l.casTTL(ctx, key, l.member); err == nil {
			l.member, l.memberAcked = rev, time.Now()
			return
		}
	}
	if rev, err := l.kv.Create(ctx, key, l.value(), jetstream.KeyTTL(l.ttl)); err == nil {
		l.member, l.memberAcked = rev, time.Now()
		return
	}
	// A previous incarnation's member key: overwrite it once it expires.
}

// casTTL writes key with a fresh TTL if it is still at revision rev. KV's
// Update would clear the TTL, so this publishes to the key's subject with
// the same expectations Update uses, plus Nats-TTL.
func (l *leases) casTTL(ctx context.Context, key string, rev uint64) (uint64, error) {
	msg := l.renewalMsg(key)
	ack, err := l.js.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(l.ttl))
	if err != nil {
		if natserr.WrongLastSequence(err) {
			return 0, fmt.Errorf("%w: %v", jetstream.ErrKeyRevisionMismatch, err)
		}
		return 0, err
	}
	return ack.Sequence, nil
}

// casTTLAsync sends casTTL's write without waiting for its
// acknowledgement (see renewAll).
func (l *leases) casTTLAsync(ctx context.Context, key string, rev uint64) (jetstream.PubAckFuture, error) {
	return pipelined.Publish(ctx, l.js, l.renewalMsg(key), jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(l.ttl))
}

// renewalMsg is the write of key's lease value to its subject.
func (l *leases) renewalMsg(key string) *nats.Msg {
	return &nats.Msg{Subject: jsname.KV(l.js, l.kv.Bucket(), key), Data: l.value(), Header: nats.Header{}}
}

// drop hands a lease back.
func (l *leases) drop(ctx context.Context, shard int, why string) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	l.mu.Lock()
	h, ok := l.held[shard]
	delete(l.held, shard)
	l.mu.Unlock()
	if !ok {
		return
	}
	_ = l.kv.Delete(ctx, shardKey(shard), jetstream.LastRevision(h.rev))
	l.log.Debug("lease handed back", "shard", shard, "why", why)
	l.event(kvstore.Event{Kind: kvstore.EventLeaseLost, Shard: &shard, Reason: why, Owner: l.instance, At: l.clock.Now().UTC()})
	l.notify()
}

// release hands every lease back and leaves the membership, so that the
// others take the shards at once instead of after the TTL.
func (l *leases) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, s := range l.heldShards() {
		l.drop(ctx, s, "stopping")
	}
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if l.member != 0 {
		_ = l.kv.Delete(ctx, "member."+l.instance, jetstream.LastRevision(l.member))
	}
}

// report tells the observer how many leases are held and how many of
// their guards are closed. reportMu keeps two goroutines reporting at
// once from leaving the older counts; the observer is called outside mu,
// so that it may ask the engine (LeasesHeld, Owns).
func (l *leases) report() {
	l.reportMu.Lock()
	defer l.reportMu.Unlock()
	l.mu.Lock()
	held, closed := len(l.held), 0
	for _, h := range l.held {
		if h.closed {
			closed++
		}
	}
	l.mu.Unlock()
	l.observe(held)
	l.guards(closed)
}

func (l *leases) notify() {
	l.report()
	select {
	case l.changed <- struct{}{}:
	default:
	}
	l.subMu.Lock()
	defer l.subMu.Unlock()
	for _, c := range l.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// subscribe returns a channel that receives (coalesced) a value whenever
// the leases held change.
func (l *leases) subscribe() <-chan struct{} {
	c := make(chan struct{}, 1)
	l.subMu.Lock()
	l.subs = append(l.subs, c)
	l.subMu.Unlock()
	return c
}

func shardKey(n int) string { return "shard." + strconv.Itoa(n) }
