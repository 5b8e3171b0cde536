package cronx

import (
	"testing"
	"unsafe"
)

// A Cron is small (a million schedules hold one each) and every field but
// the year fits the 64 bits it is kept in.
func TestCronIsSmall(t *testing.T) {
	if n := unsafe.Sizeof(Cron{}); n > 192 {
		t.Errorf("a Cron is %d bytes, want at most 192", n)
	}
	for k := fSecond; k < fYear; k++ {
		if _, hi := k.bounds(); hi > 63 {
			t.Errorf("%s goes up to %d: it does not fit Cron.vals", k, hi)
		}
	}
}
