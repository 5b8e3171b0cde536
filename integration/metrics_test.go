package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jetsched/jetsched/internal/cli"
	"github.com/jetsched/jetsched/internal/daemon"
	"github.com/jetsched/jetsched/internal/testhttp"
	"github.com/jetsched/jetsched/internal/testwait"
)

// TestMetricsAndHealth scrapes a running scheduler: fires, lateness,
// claims, leases, pending timers, and the dead-man signal of a schedule
// held back by its overlap policy.
func TestMetricsAndHealth(t *testing.T) {
	d := startDaemon(t, daemon.Config{MetricsListen: "127.0.0.1:0", DeadManTolerance: time.Second})
	base := "http://" + d.MetricsAddr()
	if code, body := testhttp.Get(t, base+"/healthz"); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("/healthz %d %s", code, body)
	}
	testwait.Eventually(t, 10*time.Second, "/readyz answering 200", func() bool { code, _ := testhttp.Get(t, base+"/readyz"); return code == 200 })

	cliRun := cliRunner(d)
	run := func(args ...string) {
		if code, _, errOut := cliRun(args...); code != cli.ExitOK {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	run("schedule", "add", "--id", "tick", "--workflow", "wf", "--every", "1s")
	// No worker reports completion: after its first fire this one waits,
	// and its next slot goes overdue.
	run("schedule", "add", "--id", "held", "--workflow", "wf", "--every", "1s", "--overlap", "buffer_all")
	run("wakeup", "add", "--run", "r", "--step", "s", "--workflow", "wf", "--when", "1h")

	testwait.Eventually(t, 15*time.Second, "the fire and claim metrics", func() bool {
		_, body := testhttp.Get(t, base+"/metrics")
		return strings.Contains(body, `jetsched_fires_total{reason="",workflow="wf"}`) &&
			strings.Contains(body, "jetsched_fire_lateness_seconds_bucket") &&
			strings.Contains(body, `jetsched_claims_total{result="won"}`) &&
			strings.Contains(body, "jetsched_leases_held 64") &&
			strings.Contains(body, "jetsched_timers_pending 1") &&
			strings.Contains(body, `jetsched_schedule_overdue_seconds{schedule="held",workflow="wf"}`) &&
			!strings.Contains(body, `jetsched_schedule_overdue_seconds{schedule="tick"`)
	})
}

// TestInvalidScheduleMetrics: a spec written past the API's validation
// (with the nats CLI, say) shows on jetsched_schedules_invalid and as an
// invalid event counted in jetsched_events_total, and leaves it when fixed.
func TestInvalidScheduleMetrics(t *testing.T) {
	d := startDaemon(t, daemon.Config{MetricsListen: "127.0.0.1:0"})
	base := "http://" + d.MetricsAddr()
	testwait.Eventually(t, 10*time.Second, "/readyz answering 200", func() bool { code, _ := testhttp.Get(t, base+"/readyz"); return code == 200 })
	specs, err := d.JetStream().KeyValue(context.Background(), d.Store().Layout().SpecsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := specs.Put(context.Background(), "bad", []byte(`{"workflow":"wf","cron":"every tuesday"}`)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "the invalid spec in the metrics", func() bool {
		_, body := testhttp.Get(t, base+"/metrics")
		return strings.Contains(body, "jetsched_schedules_invalid 1\n") &&
			strings.Contains(body, `jetsched_events_total{kind="invalid",source="schedules"} 1`)
	})
	if _, err := specs.Put(context.Background(), "bad", []byte(`{"workflow":"wf","cron":"@hourly"}`)); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, 10*time.Second, "the fixed spec out of jetsched_schedules_invalid", func() bool {
		_, body := testhttp.Get(t, base+"/metrics")
		return strings.Contains(body, "jetsched_schedules_invalid 0\n")
	})
}
