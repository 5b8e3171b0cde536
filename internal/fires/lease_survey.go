package fires

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jetsched/jetsched/pkg/kvstore"
	"github.com/nats-io/nats.go/jetstream"
)

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
