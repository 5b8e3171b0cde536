package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testlog"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestRunWithConfigFile: scheduler run --config, against a real
// nats-server, takes its server, log format, name prefix and metrics
// address from the file: /healthz answers on the address the JSON log
// names, and the buckets carry the file's prefix.
func TestRunWithConfigFile(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	file := writeFile(t, "jetsched.yaml", fmt.Sprintf(`
nats-url: %s
log-format: json
name-prefix: cfgtest
metrics-listen: 127.0.0.1:0
lease-ttl: 2s
`, srv.URL()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testlog.Buffer
	exit := make(chan int, 1)
	go func() { exit <- mainEnv(ctx, []string{"run", "--config", file}, nil, io.Discard, &stderr) }()

	var url string
	testwait.Eventually(t, 30*time.Second, "the JSON log line naming the metrics address", func() bool {
		for line := range strings.Lines(stderr.String()) {
			var rec struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "metrics and health" {
				url = strings.TrimSuffix(rec.URL, "/metrics")
				return true
			}
		}
		select {
		case code := <-exit:
			t.Fatalf("run exited %d before serving metrics: %s", code, stderr.String())
		default:
		}
		return false
	})
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	if err := testwait.Until(20*time.Second, "/healthz answering 200", func() error {
		resp, err := client.Get(url + "/healthz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/healthz: %s", resp.Status)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, js := srv.Connect(t)
	if _, err := js.KeyValue(context.Background(), "cfgtest_specs"); err != nil {
		t.Errorf("bucket cfgtest_specs of the file's name-prefix: %v", err)
	}
	cancel()
	if code := testwait.Receive(t, 30*time.Second, "run's exit after its context ends", exit); code != ExitOK {
		t.Fatalf("run exited %d: %s", code, stderr.String())
	}
	if resp, err := client.Get(url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("/healthz still answers after run returned")
	}
}
