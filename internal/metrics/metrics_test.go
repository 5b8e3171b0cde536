package metrics

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/jetsched/jetsched/internal/testhttp"
)

// TestServeEndpoints: /metrics, /healthz and /readyz (ready and not),
// and /debug/pprof/ only when profiling is asked for.
func TestServeEndpoints(t *testing.T) {
	for _, profiling := range []bool{false, true} {
		notReady := errors.New("index not complete")
		var why error = notReady
		srv, err := New(Config{}).Serve("127.0.0.1:0", func() error { return why }, profiling)
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + srv.Addr()
		if code, body := testhttp.Get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "go_goroutines") {
			t.Errorf("/metrics: %d %.80q", code, body)
		}
		if code, _ := testhttp.Get(t, base+"/healthz"); code != 200 {
			t.Errorf("/healthz: %d", code)
		}
		if code, body := testhttp.Get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "index not complete") {
			t.Errorf("/readyz while not ready: %d %q", code, body)
		}
		why = nil
		if code, _ := testhttp.Get(t, base+"/readyz"); code != 200 {
			t.Errorf("/readyz when ready: %d", code)
		}
		code, body := testhttp.Get(t, base+"/debug/pprof/heap?debug=1")
		if profiling && (code != 200 || !strings.Contains(body, "heap profile")) {
			t.Errorf("profiling on: /debug/pprof/heap: %d %.80q", code, body)
		}
		if !profiling && code != http.StatusNotFound {
			t.Errorf("profiling off: /debug/pprof/heap: %d, want 404", code)
		}
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
