package image

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// testEmbedded runs the image with its embedded nats-server, its store in
// the image's volume, as the default command does, but on free loopback
// ports (the host's network is shared).
func testEmbedded(t *testing.T, pm *podman) {
	natsAddr, metricsAddr := freeAddr(t), freeAddr(t)
	name := pm.start(t, "run", "--listen", natsAddr, "--data-dir", "/var/lib/jetsched", "--metrics-listen", metricsAddr)
	checkScheduler(t, pm, name, "nats://"+natsAddr, metricsAddr)
	pm.stopCleanly(t, name)
}

// testExternal runs the image against a nats-server of the test's own,
// as a deployment beside a NATS cluster would.
func testExternal(t *testing.T, pm *podman) {
	srv := natstest.Start(t)
	metricsAddr := freeAddr(t)
	name := pm.start(t, "run", "--nats-url", srv.URL(), "--metrics-listen", metricsAddr)
	checkScheduler(t, pm, name, srv.URL(), metricsAddr)
	pm.stopCleanly(t, name)
}

// checkScheduler waits until the containerized scheduler is ready,
// registers a schedule with the CLI on the host, and sees its fire. The
// schedule's zone comes from the binary's embedded tzdata: a scratch
// image has no zoneinfo, so a fire at the right offset shows it is there.
func checkScheduler(t *testing.T, pm *podman, name, natsURL, metricsAddr string) {
	t.Helper()
	base := "http://" + metricsAddr
	if err := testwait.Until(60*time.Second, "the container's /readyz answers 200", func() error { return get200(base + "/readyz") }); err != nil {
		t.Fatalf("%v; container logs:\n%s", err, pm.logs(name))
	}
	if err := get200(base + "/healthz"); err != nil {
		t.Fatal(err)
	}

	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatalf("connect to %s: %v", natsURL, err)
	}
	defer nc.Close()
	fires := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe("sched.fire.>", fires)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	args := []string{"schedule", "add", "--id", "image-check", "--workflow", "image-wf", "--cron", "* * * * * *", "--tz", "Australia/Lord_Howe", "--nats-url", natsURL}
	if code := cli.Main(context.Background(), args, &out, &errOut); code != cli.ExitOK {
		t.Fatalf("schedule add: exit %d: %s", code, errOut.String())
	}
	msg := testwait.Receive(t, 30*time.Second, "a fire of image-check on sched.fire.>", fires)
	meta, err := kvstore.ParseFireMeta(msg.Header)
	if err != nil {
		t.Fatalf("fire on %s: %v", msg.Subject, err)
	}
	if meta.ScheduleID != "image-check" {
		t.Fatalf("fire of %q on %s, want image-check", meta.ScheduleID, msg.Subject)
	}
	// Lord Howe is UTC+10:30, +11:00 in its summer.
	if _, off := meta.ScheduledAt.Zone(); off != 37800 && off != 39600 {
		t.Fatalf("Sched-Scheduled-At %s is not in Australia/Lord_Howe", meta.ScheduledAt)
	}
}

// get200 is nil when GET url answers 200.
func get200(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// No kept-alive connection: its goroutines would outlive the test.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// freeAddr is a loopback address with a port free a moment ago, for a
// server in a container that shares the host's network.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}
