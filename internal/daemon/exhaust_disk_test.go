package daemon_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/natsconn"
	"github.com/jetsched/jetsched/internal/natstest"
	"github.com/jetsched/jetsched/internal/testwait"
	"github.com/jetsched/jetsched/pkg/kvstore"
)

// smallDisk mounts a 16 MB tmpfs for the test (unmounted at its end),
// or skips the test when it cannot (not root, no mount).
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			break
		}
	}
	for _, size := range []int{4 << 10, 512, 1} { // the last pages too
		for {
			if _, err := f.Write(buf[:size]); err != nil {
				break
			}
		}
	}
}

// TestDiskFull: the server's store directory fills up. nats-server
// (2.15) then logs "no space left on device", marks each stream whose
// write failed as broken and stops answering its publishes; JetStream
// stays enabled, and freeing the disk does not mend the streams: only a
// server restart does. The scheduler sees its claims and fires go
// unacknowledged, says so once (an unacknowledged event, a warning, the
// blocked gauge), records nothing as failed, and once the disk is freed
// and the server restarted resumes: fire_all fires every slot held
// back, each once.
func TestDiskFull(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t)
	srv := natstest.StartIn(t, filepath.Join(disk, "jetstream"))
	r := startRig(t, srv.URL(), natsconn.Options{})
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(r.logs.String())
		}
	})
	r.put("disk", kvstore.Spec{Workflow: "wf", Every: "1s", Misfire: kvstore.MisfireFireAll})
	testwait.Eventually(t, 10*time.Second, "the schedule fires", func() bool {
		fired, _, _, _ := r.slots("disk", time.Second)
		return fired >= 2
	})

	filler := filepath.Join(disk, "filler")
	fillDisk(t, filler)
	full := time.Now()
	ev := r.waitEvent(kvstore.EventUnacknowledged, 20*time.Second)
	if ev.Instance != r.d.Engine().Instance() || ev.Reason == "" {
		t.Errorf("unacknowledged event %+v: want this instance and the error", ev)
	}
	// As long as the event's wait: a publish the server stored before the
	// disk filled can be acknowledged late, which ends the episode (gauge
	// 0) until the next publish times out and begins another.
	testwait.Eventually(t, 20*time.Second, "jetsched_publish_blocked{reason=unacknowledged} at 1", func() bool {
		return r.metric("jetsched_publish_blocked", `reason="unacknowledged"`) == 1
	})
	detected := time.Since(full)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	srv.Restart() // the streams that hit the full disk store nothing more until then
	r.recovered("disk-full", "disk", kvstore.EventUnacknowledged, time.Now(), fmt.Sprintf("detected_in=%s held=%s",
		detected.Round(100*time.Millisecond), time.Since(full).Round(100*time.Millisecond)))
}
