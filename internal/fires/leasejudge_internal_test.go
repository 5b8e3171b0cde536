package fires

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/skew"
)

// record is a leases-bucket record written at created (the server's
// time), owned by owner, renewed at renewed (its writer's clock).
func record(key, owner string, created, renewed time.Time, ttl string, caps ...string) leaseRecord {
	v, _ := json.Marshal(leaseValue{Owner: owner, Renewed: renewed, TTL: ttl, Run: "r-" + owner, Caps: caps})
	return leaseRecord{key: key, rev: uint64(created.UnixMilli()), created: created, value: v}
}

// TestJudge: which records a survey believes, judged by the server's
// clock and never by the renewed time their writer chose.
func TestJudge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	ttl := 10 * time.Second
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	both := []string{capBehindStream, capEndedLists}
	for _, tc := range []struct {
		name    string
		recs    []leaseRecord
		now     time.Time // zero: the server's time unknown
		members []string
		busy    []int
		over    []int
		ignored map[string]string // key -> why
		reads   bool
	}{
		{name: "alone", now: now, members: []string{"a"}, reads: true},
		{name: "a live fleet", now: now,
			recs: []leaseRecord{
				record("member.b", "b", ago(2*time.Second), ago(2*time.Second), "10s", both...),
				record("shard.1", "b", ago(3*time.Second), ago(3*time.Second), "10s"),
				record("shard.2", "a", ago(time.Second), ago(time.Second), "10s"),
			},
			members: []string{"a", "b"}, busy: []int{1, 2}, reads: true},
		{name: "a skewed member (30 s behind) is a member", now: now,
			recs:    []leaseRecord{record("member.b", "b", ago(2*time.Second), ago(32*time.Second), "10s")},
			members: []string{"a", "b"}},
		{name: "a member renewed in 9999", now: now,
			recs:    []leaseRecord{record("member.ghost", "ghost", ago(time.Second), far, "10s")},
			members: []string{"a"}, reads: true, ignored: map[string]string{"member.ghost": ignoredImplausible}},
		{name: "a member renewed in 9999, the server's time unknown", now: time.Time{},
			recs:    []leaseRecord{record("member.ghost", "ghost", ago(time.Second), far, "10s")},
			members: []string{"a"}, reads: true, ignored: map[string]string{"member.ghost": ignoredImplausible}},
		{name: "a member with no renewed time", now: now,
			recs:    []leaseRecord{record("member.b", "b", ago(time.Second), time.Time{}, "10s")},
			members: []string{"a"}, reads: true, ignored: map[string]string{"member.b": ignoredImplausible}},
		{name: "a member not rewritten within its TTL, renewed ahead", now: now,
			recs:    []leaseRecord{record("member.old", "old", ago(12*time.Second), ago(12*time.Second).Add(9*time.Minute), "10s")},
			members: []string{"a"}, reads: true, ignored: map[string]string{"member.old": ignoredStale}},
		{name: "a member within its TTL and the grace", now: now,
			recs:    []leaseRecord{record("member.b", "b", ago(10500*time.Millisecond), ago(10500*time.Millisecond), "10s")},
			members: []string{"a", "b"}},
		{name: "nothing is stale while the server's time is unknown", now: time.Time{},
			recs:    []leaseRecord{record("member.old", "old", ago(time.Hour), ago(time.Hour), "10s")},
			members: []string{"a", "old"}},
		{name: "a member with a longer TTL is honoured up to it", now: now,
			recs:    []leaseRecord{record("member.b", "b", ago(50*time.Second), ago(50*time.Second), "1m")},
			members: []string{"a", "b"}},
		{name: "a member claiming a day's TTL is honoured for 5 minutes", now: now,
			recs:    []leaseRecord{record("member.b", "b", ago(6*time.Minute), ago(6*time.Minute), "24h")},
			members: []string{"a"}, reads: true, ignored: map[string]string{"member.b": ignoredStale}},
		{name: "a member named otherwise than its key", now: now,
			recs:    []leaseRecord{record("member.b", "c", ago(time.Second), ago(time.Second), "10s")},
			members: []string{"a"}, reads: true, ignored: map[string]string{"member.b": ignoredValue}},
		{name: "a member that is not JSON", now: now,
			recs:    []leaseRecord{{key: "member.b", rev: 7, created: ago(time.Second), value: []byte("{")}},
			members: []string{"a"}, reads: true, ignored: map[string]string{"member.b": ignoredValue}},
		{name: "a lease renewed in 9999 is taken over at once", now: now,
			recs: []leaseRecord{
				record("member.b", "b", ago(time.Second), ago(time.Second), "10s", both...),
				record("shard.3", "b", ago(time.Second), far, "10s"),
			},
			members: []string{"a", "b"}, over: []int{3}, reads: true, ignored: map[string]string{"shard.3": ignoredImplausible}},
		{name: "a lease of a member, not rewritten within the TTL", now: now,
			recs: []leaseRecord{
				record("member.b", "b", ago(time.Second), ago(time.Second), "10s", both...),
				record("shard.3", "b", ago(20*time.Second), now.Add(5*time.Minute), "10s"),
			},
			members: []string{"a", "b"}, over: []int{3}, reads: true, ignored: map[string]string{"shard.3": ignoredStale}},
		{name: "a lease of no member, young", now: now,
			recs:    []leaseRecord{record("shard.3", "ghost", ago(5*time.Second), ago(5*time.Second), "1m")},
			members: []string{"a"}, busy: []int{3}, reads: true},
		{name: "a lease of no member, past this instance's TTL whatever it claims", now: now,
			recs:    []leaseRecord{record("shard.3", "ghost", ago(12*time.Second), ago(12*time.Second), "1m")},
			members: []string{"a"}, over: []int{3}, reads: true, ignored: map[string]string{"shard.3": ignoredOrphan}},
		{name: "this process's own lease is its own", now: now,
			recs:    []leaseRecord{{key: "shard.4", rev: 9, created: ago(time.Hour), value: mustJSON(leaseValue{Owner: "a", Run: "r-a", Renewed: far})}},
			members: []string{"a"}, busy: []int{4}, reads: true},
		{name: "this process's own member record is a member, whatever it says", now: now,
			recs:    []leaseRecord{{key: "member.a", rev: 9, created: ago(time.Hour), value: []byte("x")}},
			members: []string{"a"}, reads: true},
		{name: "keys that are no shard lease", now: now,
			recs: []leaseRecord{
				record("shard.07", "b", ago(time.Second), ago(time.Second), "10s"),
				record("shard.64", "b", ago(time.Second), ago(time.Second), "10s"),
				record("shard.-1", "b", ago(time.Second), ago(time.Second), "10s"),
				record("shard.x", "b", ago(time.Second), ago(time.Second), "10s"),
				record("shard.+7", "b", ago(time.Second), ago(time.Second), "10s"),
			},
			members: []string{"a"}, reads: true,
			ignored: map[string]string{"shard.07": ignoredKey, "shard.64": ignoredKey, "shard.-1": ignoredKey, "shard.x": ignoredKey, "shard.+7": ignoredKey}},
		{name: "a member of the release before caps closes the gates", now: now,
			recs:    []leaseRecord{record("member.old", "old", ago(time.Second), ago(time.Second), "10s")},
			members: []string{"a", "old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sv := judge(tc.recs, "a", "r-a", 64, tc.now, ttl)
			if got := sortedKeys(sv.members); !slices.Equal(got, sorted(tc.members)) {
				t.Errorf("members %v, want %v", got, tc.members)
			}
			if got := sortedKeys(sv.busy); !slices.Equal(got, sorted(tc.busy)) {
				t.Errorf("busy %v, want %v", got, tc.busy)
			}
			if got := sortedKeys(sv.over); !slices.Equal(got, sorted(tc.over)) {
				t.Errorf("over %v, want %v", got, tc.over)
			}
			ignored := map[string]string{}
			for _, r := range sv.ignored {
				ignored[r.key] = r.why
			}
			if fmt.Sprint(ignored) != fmt.Sprint(tc.ignored) && (len(ignored) > 0 || len(tc.ignored) > 0) {
				t.Errorf("ignored %v, want %v", ignored, tc.ignored)
			}
			if sv.reads != tc.reads || sv.lists != tc.reads {
				t.Errorf("reads, lists %v, %v; want %v", sv.reads, sv.lists, tc.reads)
			}
		})
	}
}

// FuzzJudge: whatever a bucket holds, a survey counts this instance as a
// member, never both takes and leaves a shard, never believes a record
// whose renewed time is implausible or that is older than any TTL it may
// be judged by, and takes over only records it reports.
func FuzzJudge(f *testing.F) {
	f.Add("member.b", `{"owner":"b","renewed":"2026-12-06T12:00:00Z","ttl":"10s"}`, int64(2000))
	f.Add("shard.5", `{"owner":"ghost","renewed":"9999-01-01T00:00:00Z","ttl":"10s"}`, int64(20000))
	f.Add("shard.07", `{"owner":"b","renewed":"2026-12-06T12:00:00Z"}`, int64(0))
	f.Add("member.a", `not json`, int64(1))
	f.Add("shard.3", `{"owner":"a","run":"r-a","renewed":"2026-12-06T12:00:00Z","ttl":"24h"}`, int64(400000))
	created := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	const ttl = 10 * time.Second
	f.Fuzz(func(t *testing.T, key, value string, ageMs int64) {
		now := created.Add(time.Duration(ageMs) * time.Millisecond)
		recs := []leaseRecord{{key: key, rev: 1, created: created, value: []byte(value)}}
		sv := judge(recs, "a", "r-a", 64, now, ttl)
		if !sv.members["a"] {
			t.Fatal("this instance is no member")
		}
		for s := range sv.over {
			if sv.busy[s] {
				t.Fatalf("shard %d both busy and taken over", s)
			}
		}
		reported := map[string]bool{}
		for _, r := range sv.ignored {
			reported[r.key] = true
		}
		if len(sv.over) > 0 && !reported[key] {
			t.Fatalf("%s taken over unreported", key)
		}
		var v leaseValue
		if json.Unmarshal([]byte(value), &v) != nil || key == "member.a" || (v.Owner == "a" && v.Run == "r-a") {
			return
		}
		believed := len(sv.busy) > 0 || len(sv.members) > 1
		if believed && !v.Renewed.IsZero() && v.Renewed.Sub(created).Abs() > 10*time.Minute {
			t.Fatalf("%s = %s believed with renewed %v, written %v", key, value, v.Renewed, created)
		}
		if believed && now.Sub(created) > skew.MaxHonouredTTL+skew.StaleGrace {
			t.Fatalf("%s = %s believed %v after its write", key, value, now.Sub(created))
		}
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func sortedKeys[K string | int, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sorted[T string | int](s []T) []T {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
