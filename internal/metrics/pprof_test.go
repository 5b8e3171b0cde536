package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestProfilesAreBounded: with profiling on, /debug/pprof/cmdline (the
// process's arguments: a --password among them) is not served, and a
// profile, trace or delta profile longer than MaxProfileSeconds, or a
// seconds that is no number, is refused with 400 naming the cap, before
// anything is collected; a short one is served.
func TestProfilesAreBounded(t *testing.T) {
	srv, err := New(Config{}).Serve("127.0.0.1:0", func() error { return nil }, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(context.Background()) }()
	base := "http://" + srv.Addr() + "/debug/pprof/"
	// Bounded: an uncapped profile of an hour would hold the test.
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(url string) (int, string) {
		resp, err := client.Get(url)
		if err != nil {
			t.Errorf("GET %s: %v", url, err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, path := range []string{"cmdline", "cmdline?x=1"} {
		if code, body := get(base + path); code != http.StatusNotFound {
			t.Errorf("%s: %d %.80q, want 404", path, code, body)
		}
	}
	for _, path := range []string{
		"profile?seconds=61", "profile?seconds=3600", "trace?seconds=1e9", "trace?seconds=NaN",
		"trace?seconds=Inf", "heap?seconds=86400", "allocs?seconds=61", "profile?seconds=soon",
	} {
		code, body := get(base + path)
		if code != http.StatusBadRequest || !strings.Contains(body, "seconds") || !strings.Contains(body, "60") {
			t.Errorf("%s: %d %.120q, want 400 naming seconds and the cap 60", path, code, body)
		}
	}
	if code, body := get(base + "trace?seconds=0.05"); code != http.StatusOK {
		t.Errorf("trace?seconds=0.05: %d %.80q, want 200", code, body)
	}
	if code, _ := get(base); code != http.StatusOK {
		t.Errorf("the index: %d, want 200", code)
	}
}
