package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/jsstore"
)

// TestEndedSlotsCountsWhatIsEncoded checks the herd's cheap count of an
// ended list's slots against the record kvstore writes, with ids and
// times of every shape the herd and a fleet use.
func TestEndedSlotsCountsWhatIsEncoded(t *testing.T) {
	at := time.Date(2026, 12, 4, 23, 0, 0, 0, time.UTC)
	for _, n := range []int{0, 1, 2, 511, 512} {
		l := jsstore.Ended{Shard: 3, Owner: "bench-1", At: at}
		for i := range n {
			l.Slots = append(l.Slots, jsstore.EndedSlot{Schedule: fmt.Sprintf("h%07d/x_y=z.%d", i, i), Slot: at.Add(time.Duration(i) * time.Millisecond), Seq: uint64(i + 1), Window: "3/7"})
		}
		data, err := l.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got := endedSlots(data); got != n {
			t.Errorf("endedSlots of a list of %d = %d", n, got)
		}
	}
}
