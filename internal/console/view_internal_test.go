package console

import (
	"testing"
	"time"
)

// TestDurText checks the relative times of the pages: hours that round to
// a whole day carry into the days ("7d0h", never "6d24h").
func TestDurText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{1500 * time.Millisecond, "1.5s"},
		{4*time.Minute + 10*time.Second, "4m10s"},
		{2*time.Hour + 5*time.Minute, "2h5m"},
		{3*24*time.Hour + 4*time.Hour, "3d4h"},
		{6*24*time.Hour + 23*time.Hour + 40*time.Minute, "7d0h"},
		{6*24*time.Hour + 23*time.Hour + 20*time.Minute, "6d23h"},
		{48 * time.Hour, "2d0h"},
	} {
		if got := durText(c.d); got != c.want {
			t.Errorf("durText(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
