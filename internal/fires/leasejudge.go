package fires

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jetsched/jetsched/internal/skew"
)

// Records judged by the server's clock (docs/protocol.md, "Records judged
// by the server's clock").
//
// A shard lease or member record is believed by what the server says of
// it, never by the "renewed" a writer put in it: a record that was not
// rewritten within its TTL, by the server's time of its last write (the
// entry's Created) against the server's time as this instance knows it
// (skew.ServerClock), is stale, whether the server failed to expire it (it
// was written without a per-key TTL) or not. A record whose "renewed" is
// implausibly far from the server's time of its write, whose value is not
// a lease value, whose key does not parse, or a lease whose holder is no
// live member past this instance's TTL, is ignored too. An ignored member
// does not count in the fair share; an ignored lease's shard is free, and
// taken by CAS over the ignored record's revision.

// Why a record is ignored (lease_ignored's Reason).
const (
	ignoredKey         = "unknown key"
	ignoredValue       = "not a lease record"
	ignoredImplausible = "implausible renewed time"
	ignoredStale       = "stale"
	ignoredOrphan      = "holder not a member"
)

// leaseRecord is one key of the leases bucket as a survey reads it.
type leaseRecord struct {
	key     string
	rev     uint64
	created time.Time // the server's time of the write
	value   []byte
}

// ignoredRecord is a record a survey does not believe, and why.
type ignoredRecord struct {
	key   string
	shard int // -1: not a shard lease
	owner string
	rev   uint64
	why   string
	age   time.Duration // by the server's clock
}

// surveyed is what a survey of the leases bucket found.
type surveyed struct {
	// members are the live members' names, this instance's among them.
	members map[string]bool
	// busy are the shards whose lease is live, whoever holds it.
	busy map[int]bool
	// over are the shards whose lease record is ignored: its revision,
	// for a take-over by CAS.
	over map[int]uint64
	// reads, lists: every live member but this one announces
	// capBehindStream, capEndedLists.
	reads, lists bool
	ignored      []ignoredRecord
}

// judge is the pure part of a survey: which of recs to believe, with
// now the server's time as this instance knows it (zero: unknown, so
// nothing is judged stale), ttl this instance's lease TTL. self and run
// name this process: its own member key is a member whatever it says (it
// is alive), and its own leases are its own.
func judge(recs []leaseRecord, self, run string, shards int, now time.Time, ttl time.Duration) surveyed {
	out := surveyed{members: map[string]bool{self: true}, busy: map[int]bool{}, over: map[int]uint64{}, reads: true, lists: true}
	type lease struct {
		rec   leaseRecord
		shard int
		v     leaseValue
	}
	var leases []lease
	for _, r := range recs {
		kind, name, shard := parseLeaseKey(r.key, shards)
		if kind == "" {
			out.ignored = append(out.ignored, ignoredRecord{key: r.key, shard: -1, rev: r.rev, why: ignoredKey})
			continue
		}
		var v leaseValue
		ok := json.Unmarshal(r.value, &v) == nil && v.Owner != "" && (kind == "shard" || v.Owner == name)
		if kind == "member" && name == self {
			continue // this instance: a member, and announces every cap
		}
		if kind == "shard" && ok && v.Owner == self && v.Run == run {
			out.busy[shard] = true // this process's own
			continue
		}
		ign := ignoredRecord{key: r.key, shard: shard, owner: v.Owner, rev: r.rev, age: age(now, r.created)}
		switch {
		case !ok:
			ign.why = ignoredValue
		case !skew.Plausible(v.Renewed, r.created):
			ign.why = ignoredImplausible
		case skew.Stale(r.created, now, v.TTL, ttl):
			ign.why = ignoredStale
		}
		if ign.why != "" {
			if kind == "shard" {
				out.over[shard] = r.rev
			}
			out.ignored = append(out.ignored, ign)
			continue
		}
		if kind == "member" {
			out.members[name] = true
			out.reads = out.reads && slices.Contains(v.Caps, capBehindStream)
			out.lists = out.lists && slices.Contains(v.Caps, capEndedLists)
			continue
		}
		leases = append(leases, lease{rec: r, shard: shard, v: v})
	}
	for _, l := range leases {
		a := age(now, l.rec.created)
		if !out.members[l.v.Owner] && skew.Stale(l.rec.created, now, "", ttl) {
			out.over[l.shard] = l.rec.rev
			out.ignored = append(out.ignored, ignoredRecord{key: l.rec.key, shard: l.shard, owner: l.v.Owner, rev: l.rec.rev, why: ignoredOrphan, age: a})
			continue
		}
		out.busy[l.shard] = true
	}
	return out
}

// parseLeaseKey names what a key of the leases bucket's shard.* and
// member.* is: kind "shard" with its shard (written as shardKey writes
// it, below shards), or "member" with the instance's name; kind "" for
// a key that is neither.
func parseLeaseKey(key string, shards int) (kind, name string, shard int) {
	if rest, ok := strings.CutPrefix(key, "member."); ok && rest != "" && !strings.Contains(rest, ".") {
		return "member", rest, -1
	}
	if rest, ok := strings.CutPrefix(key, "shard."); ok {
		n, err := strconv.Atoi(rest)
		if err == nil && n >= 0 && n < shards && strconv.Itoa(n) == rest {
			return "shard", "", n
		}
	}
	return "", "", -1
}

// age is how long before now, the server's time, a record was written
// (0 when now is unknown or earlier).
func age(now, created time.Time) time.Duration {
	if now.IsZero() {
		return 0
	}
	return max(now.Sub(created), 0)
}
