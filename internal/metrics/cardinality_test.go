package metrics

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/testhttp"
)

// TestWorkflowLabelCapped (issue 52, part B): 2,000 workflows firing make
// at most the cap's series per workflow-labelled metric, the rest counted
// under workflow="other", and every fire is still counted.
func TestWorkflowLabelCapped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit, want int
	}{
		{0, 101}, // the default, 100, and other
		{10, 11},
	} {
		m := New(Config{WorkflowLimit: tc.limit})
		for i := range 2000 {
			m.Fired(fmt.Sprintf("wf-%04d", i), time.Millisecond, "")
		}
		srv, err := m.Serve("127.0.0.1:0", func() error { return nil }, false)
		if err != nil {
			t.Fatal(err)
		}
		_, body := testhttp.Get(t, "http://"+srv.Addr()+"/metrics")
		_ = srv.Shutdown(t.Context())
		fires, lateness, total := 0, 0, 0.0
		for _, line := range strings.Split(body, "\n") {
			switch {
			case strings.HasPrefix(line, "jetsched_fires_total{"):
				fires++
				var v float64
				fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
				total += v
			case strings.HasPrefix(line, "jetsched_fire_lateness_seconds_count{"):
				lateness++
			}
		}
		if fires != tc.want || lateness != tc.want || total != 2000 {
			t.Errorf("limit %d: %d fires series, %d lateness series (want %d each), %v fires counted (want 2000); /metrics is %d bytes",
				tc.limit, fires, lateness, tc.want, total, len(body))
		}
		if !strings.Contains(body, `jetsched_fires_total{reason="",workflow="other"} `+fmt.Sprint(2000-tc.want+1)) {
			t.Errorf("limit %d: no other series with the rest", tc.limit)
		}
		t.Logf("limit %d: /metrics %d bytes", tc.limit, len(body))
	}
}
