package fires

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetsched/jetsched/internal/clock"
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

// ignoredWarnEvery is how often one ignored record is reported again
// while it stays; maxWarned bounds the records remembered meanwhile.
const (
	ignoredWarnEvery = time.Minute
	maxWarned        = 1024
)

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
