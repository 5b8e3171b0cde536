package metrics

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"strconv"
)

// MaxProfileSeconds caps the seconds= of /debug/pprof/profile, /trace and
// the delta profiles (/heap?seconds=N, ...): each holds a connection and,
// for a CPU profile or a trace, costs the process while it runs.
const MaxProfileSeconds = 60

// profiles serves Go's profiles under /debug/pprof/ (net/http/pprof) with
// two differences: /debug/pprof/cmdline is not served (404), since the
// process's arguments may hold a --password; and a seconds= above
// MaxProfileSeconds, or one that is no number, is refused with 400 before
// anything is collected.
func profiles() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.Handle("/debug/pprof/cmdline", http.NotFoundHandler())
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkSeconds(r.URL.Query().Get("seconds")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// checkSeconds refuses a seconds= that is no number or above
// MaxProfileSeconds ("" is pprof's default: 30 s for a CPU profile, 1 s
// for a trace, a plain snapshot for the others).
func checkSeconds(v string) error {
	if v == "" {
		return nil
	}
	sec, err := strconv.ParseFloat(v, 64)
	// !(sec <= max) also refuses NaN.
	if err != nil || !(sec <= MaxProfileSeconds) {
		return fmt.Errorf("seconds=%q: a number of seconds, at most %d", v, MaxProfileSeconds)
	}
	return nil
}
