package labelcap

import (
	"fmt"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestCap: the first max distinct values keep themselves, again and
// again; later ones are Other; concurrent callers admit exactly max.
func TestCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max, values, want int // want: distinct results, Other included
	}{
		{max: 3, values: 2, want: 2},
		{max: 3, values: 3, want: 3},
		{max: 3, values: 10, want: 4},
		{max: 0, values: 2000, want: DefaultMax + 1},
		{max: -1, values: 5, want: 1},
	} {
		t.Run(fmt.Sprintf("max %d of %d", tc.max, tc.values), func(t *testing.T) {
			c := New(tc.max)
			got := map[string]bool{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := range tc.values {
						v := c.Value(fmt.Sprintf("wf%d", (i+w)%tc.values))
						mu.Lock()
						got[v] = true
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if len(got) != tc.want {
				t.Fatalf("%d distinct values, want %d", len(got), tc.want)
			}
			for v := range got {
				if v != Other && c.Value(v) != v {
					t.Fatalf("admitted %q is not kept", v)
				}
			}
		})
	}
}
