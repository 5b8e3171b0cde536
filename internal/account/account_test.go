package account_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/account"
	"github.com/jetsched/jetsched/pkg/cronx"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// TestAccount: every owed occurrence gets its fate from the evidence: a
// fire in the stream, a ledger entry (its own, or one standing for a run
// through it), the engine's cursor (pending), or none (unaccounted).
func TestAccount(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	fired := func(m int, seq uint64) kvstore.Tick {
		return kvstore.Tick{Schedule: "s", Slot: at(m), Status: kvstore.TickDispatched, Stream: "SCHED_FIRES", Seq: seq}
	}
	ledger := map[string]kvstore.Tick{}
	put := func(t kvstore.Tick) { ledger[t.Key()] = t }
	put(fired(1, 10))
	put(fired(2, 11))
	put(kvstore.Tick{Schedule: "s", Slot: at(3), Status: kvstore.TickMissed, Reason: "misfire: 5m late, threshold 1m0s"})
	// one entry standing for slots 4 through 6
	put(kvstore.Tick{Schedule: "s", Slot: at(4), Status: kvstore.TickMissed, Reason: "misfire (this entry stands for 3 more slots)", Through: at(6)})
	// 7 has nothing: unaccounted
	put(kvstore.Tick{Schedule: "s", Slot: at(8), Status: kvstore.TickCompleted, Stream: "SCHED_FIRES", Seq: 12, Outcome: "ok"})
	put(kvstore.Tick{Schedule: "s", Slot: at(9), Status: kvstore.TickFailed, Reason: "nats: maximum payload exceeded"})
	// 10 is the claim in flight, 11 and after are ahead of the engine
	state := &kvstore.State{Next: at(11), Claim: &kvstore.Claim{Slot: at(10), Token: "t", Owner: "a", At: at(10), Expires: at(10).Add(30 * time.Second)}}

	var entries []account.Entry
	sum := account.Account(account.Input{
		ID:         "s",
		Recurrence: account.RecurrenceOf(cronx.Interval{Every: time.Minute}),
		Owed:       at(0),
		From:       at(0),
		To:         at(12),
		Now:        at(12).Add(10 * time.Second),
		State:      state,
		Ledger:     ledger,
	}, func(e account.Entry) { entries = append(entries, e) })

	want := map[int]string{1: account.FateFired, 2: account.FateFired, 3: account.FateNotFired, 4: account.FateNotFired,
		5: account.FateNotFired, 6: account.FateNotFired, 7: account.FateUnaccounted, 8: account.FateFired, 9: account.FateNotFired,
		10: account.FatePending, 11: account.FatePending, 12: account.FatePending}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(entries), len(want), entries)
	}
	for _, e := range entries {
		m := int(e.Nominal.Sub(t0) / time.Minute)
		if e.Fate != want[m] {
			t.Errorf("slot %d: %s (%s), want %s", m, e.Fate, e.Evidence, want[m])
		}
	}
	if entries[4].Evidence != "sched_ticks s."+itoa(at(4)) {
		t.Errorf("slot 5's evidence %q, want the entry standing for it", entries[4].Evidence)
	}
	if got := sum.Line(); got != "owed 12, fired 3, not fired with reason 5, pending 3, unaccounted 1" {
		t.Errorf("summary %q", got)
	}

	// The ledger's retention clips the range, and says so.
	sum = account.Account(account.Input{ID: "s", Recurrence: account.RecurrenceOf(cronx.Interval{Every: time.Minute}),
		Owed: at(0), From: at(0), To: at(12), Now: at(12), Retained: at(5), State: state, Ledger: ledger}, nil)
	if sum.Owed != 7 || !strings.Contains(sum.Clipped, "expired") {
		t.Errorf("clipped: %+v, want 7 owed from the retention on", sum)
	}
	// A schedule younger than the retention starts at its creation, and
	// the note says so, not the retention that clipped before it.
	sum = account.Account(account.Input{ID: "s", Recurrence: account.RecurrenceOf(cronx.Interval{Every: time.Minute}),
		Owed: at(5), From: at(0), To: at(12), Now: at(12), Retained: at(2), State: state, Ledger: ledger}, nil)
	if sum.Owed != 7 || !sum.From.Equal(at(5)) || !strings.Contains(sum.Clipped, "owed nothing before") {
		t.Errorf("clipped by the retention, then the creation: %+v, want 7 owed from the creation on, saying so", sum)
	}
}

func itoa(t time.Time) string { return kvstore.SlotID("", t)[1:] }
